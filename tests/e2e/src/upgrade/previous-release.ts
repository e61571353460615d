import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * The release an operator upgrades from: the commit in tests/e2e/previous-release, bumped by the
 * maintainer at each release (docs/operations.md#upgrading). Lines starting with `#` are comments.
 */
export const PIN_FILE = 'tests/e2e/previous-release';

export async function previousReleaseCommit(root: string): Promise<string> {
  const text = await readFile(path.join(root, PIN_FILE), 'utf8');
  const commit = text
    .split('\n')
    .map((line) => line.trim())
    .find((line) => line !== '' && !line.startsWith('#'));
  if (!commit || !/^[0-9a-f]{7,40}$/.test(commit))
    throw new Error(`${PIN_FILE} names no commit (one hexadecimal commit id on a line of its own)`);
  return commit;
}

/** Full id of `commit`; a clone without it (shallow, or a pin that never landed) says so. */
export async function resolveCommit(root: string, commit: string): Promise<string> {
  try {
    const { stdout } = await run('git', ['-C', root, 'rev-parse', '--verify', `${commit}^{commit}`]);
    return stdout.trim();
  } catch {
    throw new Error(
      `${PIN_FILE}: commit ${commit} is not in this clone (a shallow clone? the upgrade test needs the full history)`,
    );
  }
}

export async function isAncestorOfHead(root: string, commit: string): Promise<boolean> {
  try {
    await run('git', ['-C', root, 'merge-base', '--is-ancestor', commit, 'HEAD']);
    return true;
  } catch {
    return false;
  }
}

/** Migration folder names of `commit` (prisma/migrations/<name>/migration.sql). */
export async function migrationsAt(root: string, commit: string): Promise<string[]> {
  const { stdout } = await run('git', ['-C', root, 'ls-tree', '--name-only', `${commit}:prisma/migrations`]);
  return stdout.split('\n').filter((name) => /^\d{14}_/.test(name));
}

/**
 * The previous release's app bundles, built from git the way its images are: its tree exported
 * with `git archive` (the checkout is left alone), its own lockfile installed, its Prisma client
 * generated, and its own docker/bundle.mjs run. Cached in .data/previous-release/<commit>/ (the
 * `bundles` folder appears only once complete), so only the first run pays for the build.
 */
export async function previousReleaseBundles(
  root: string,
  commit: string,
  log: (line: string) => void = () => {},
): Promise<string> {
  const home = path.join(root, '.data/previous-release', commit);
  const bundles = path.join(home, 'bundles');
  if (existsSync(bundles)) return bundles;
  const started = Date.now();
  const source = path.join(home, 'source');
  await rm(home, { recursive: true, force: true });
  await mkdir(source, { recursive: true });
  const archive = path.join(home, 'source.tar');
  await run('git', ['-C', root, 'archive', '--format=tar', '-o', archive, commit]);
  await run('tar', ['-xf', archive, '-C', source]);
  await rm(archive);
  const options = { cwd: source, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, CI: '1' } };
  try {
    await run('pnpm', ['install', '--offline', '--frozen-lockfile'], options);
  } catch {
    log('previous release: the pnpm store lacks some of its packages, installing from the registry');
    await run('pnpm', ['install', '--frozen-lockfile', '--prefer-offline'], options);
  }
  // pnpm's postinstall generated the Prisma client; generate again in case scripts were skipped.
  await run('node', ['scripts/prisma-generate.mjs'], options);
  const staging = path.join(home, 'bundles-staging');
  await run('node', ['docker/bundle.mjs', staging, 'api', 'worker'], options);
  await rename(staging, bundles);
  await writeFile(path.join(home, 'built-at'), `${new Date().toISOString()} in ${Date.now() - started} ms\n`);
  // The bundles carry what they need: the source tree and its node_modules are 1 GB of nothing.
  await rm(source, { recursive: true, force: true });
  log(`previous release ${commit.slice(0, 10)}: built in ${Date.now() - started} ms`);
  return bundles;
}
