import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(full) : statSync(full).mtimeMs);
  }
  return newest;
}

/**
 * The API serves the dashboard from apps/web/dist: the browser tests and the bench build it when it
 * is missing or older than its sources, so they never measure or drive a stale build.
 */
export function ensureDashboardBuilt(root: string): string {
  const app = path.join(root, 'apps/web');
  if (!existsSync(path.join(app, 'package.json'))) throw new Error('apps/web does not exist');
  const index = path.join(app, 'dist/index.html');
  const newest = Math.max(newestMtime(path.join(app, 'src')), statSync(path.join(app, 'index.html')).mtimeMs);
  if (!existsSync(index) || statSync(index).mtimeMs < newest) {
    // NODE_ENV=production whatever the caller runs under: vitest sets NODE_ENV=test, and Vite then
    // bundles React's development build (558 KB instead of 307 KB), not what users are served.
    execFileSync('pnpm', ['-s', '-C', app, 'run', 'build'], {
      cwd: root,
      stdio: 'inherit',
      env: { ...process.env, NODE_ENV: 'production' },
    });
  }
  return path.join(app, 'dist');
}
