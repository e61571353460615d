import { spawn } from 'node:child_process';
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import dockerignoreModule from '@balena/dockerignore';

// CommonJS: module.exports is the factory, though the package's types declare a default export.
const dockerignore = dockerignoreModule as unknown as typeof dockerignoreModule.default;

/**
 * The build context `docker build .` would send: every file and symlink of ROOT that .dockerignore
 * does not exclude (Docker's semantics via @balena/dockerignore), as paths relative to ROOT.
 * Excluded directories are not walked unless a `!` pattern may re-include something inside them,
 * which keeps .git and the pnpm store's dev tools out of the walk.
 */
export function contextFiles(root: string): string[] {
  const rules = readFileSync(path.join(root, '.dockerignore'), 'utf8');
  const matcher = dockerignore({ ignorecase: false }).add(rules);
  const exceptions = rules
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.startsWith('!'))
    .map((line) => line.slice(1).replace(/^\/+/, '').split('/'));

  const files: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(path.join(root, dir))) {
      const relative = dir === '' ? name : `${dir}/${name}`;
      const stat = lstatSync(path.join(root, relative));
      if (stat.isDirectory()) {
        if (!matcher.ignores(relative) || exceptions.some((pattern) => mayMatchInside(pattern, relative)))
          walk(relative);
      } else if (!matcher.ignores(relative)) {
        files.push(relative);
      }
    }
  };
  walk('');
  return files.sort();
}

/** Could a `!` pattern (split into segments) match a path below directory DIR? */
function mayMatchInside(pattern: string[], dir: string): boolean {
  const segments = dir.split('/');
  for (const [i, segment] of segments.entries()) {
    const part = pattern[i];
    if (part === undefined) return false;
    if (part === '**') return true;
    if (!globSegment(part).test(segment)) return false;
  }
  return pattern.length > segments.length;
}

function globSegment(glob: string): RegExp {
  const body = glob
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '[^/]*')
    .replace(/\?/g, '[^/]');
  return new RegExp(`^${body}$`);
}

/**
 * The context as a tar stream (GNU tar: symlinks kept as symlinks, owners numeric). Parent
 * directories are archived too: without their headers the daemon would create them with a fresh
 * mtime on every build and `COPY . .` would never hit the build cache.
 */
export function contextTar(root: string, files: string[] = contextFiles(root)): Readable {
  const entries = new Set<string>();
  for (const file of files) {
    const parts = file.split('/');
    for (let i = 1; i < parts.length; i++) entries.add(parts.slice(0, i).join('/'));
  }
  for (const file of files) entries.add(file);
  const tar = spawn('tar', ['-c', '--no-recursion', '--numeric-owner', '--null', '-C', root, '-T', '-'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  tar.stdin.end(
    [...entries]
      .sort()
      .map((entry) => `${entry}\0`)
      .join(''),
  );
  return tar.stdout;
}
