import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

/**
 * The apps as production images run them: esbuild bundles (docker/bundle.mjs), built once per test
 * run. A stack started from them is ready in about a second, where `node --import tsx` compiles
 * the module graph of every api, worker and CLI process it starts (2–3 s each on a quiet machine,
 * many times that under the test command's load; each e2e file starts a stack and runs the CLI).
 */
export interface AppBundles {
  dir: string;
  /** `apps/<app>/src/<entry>.ts` → the bundle that production runs for it. */
  entryOf(source: string): string;
}

const ENTRIES: Record<string, string> = {
  'apps/api/src/main.ts': 'api/apps/api/dist/main.mjs',
  'apps/cli/src/main.ts': 'api/apps/api/dist/cli.mjs',
  'apps/worker/src/main.ts': 'worker/apps/worker/dist/main.mjs',
};

export async function buildAppBundles(root: string): Promise<{ dir: string; remove: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(root, '.data/bundles-'));
  await promisify(execFile)(process.execPath, ['docker/bundle.mjs', dir, 'api', 'worker'], {
    cwd: root,
    maxBuffer: 16 * 1024 * 1024,
  });
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

export function appBundles(dir: string): AppBundles {
  return {
    dir,
    entryOf(source) {
      const bundled = ENTRIES[source];
      if (!bundled) throw new Error(`no bundle for ${source}: add it to packages/testing/src/app-bundles.ts`);
      return path.join(dir, bundled);
    },
  };
}
