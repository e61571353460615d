import { lstat, readFile, readdir, realpath } from 'node:fs/promises';
import path from 'node:path';

/**
 * Reads a checked-out tenant repository without trusting it: a repository can contain symbolic
 * links to anything on the worker (`Dockerfile -> /etc/shadow`, `ctx -> /`). Files we read must
 * be regular files, and every path must stay inside the checkout after resolving links, so
 * nothing outside the checkout is ever read, parsed or sent to the Docker engine as a context.
 */
export class RepositoryContentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RepositoryContentError';
  }
}

/** True when `relative` is a regular file (not a link) inside the checkout. */
export async function isRegularFile(root: string, relative: string): Promise<boolean> {
  const info = await lstat(path.join(root, relative)).catch(() => null);
  return info?.isFile() === true;
}

export async function readRepoFile(root: string, relative: string, maxBytes: number): Promise<string> {
  const full = path.join(root, relative);
  const info = await lstat(full).catch(() => null);
  if (!info?.isFile())
    throw new RepositoryContentError(`${relative} is not a regular file in the repository`);
  await ensureInside(root, relative);
  if (info.size > maxBytes)
    throw new RepositoryContentError(`${relative} is larger than ${Math.round(maxBytes / 1024)} KiB`);
  return readFile(full, 'utf8');
}

/** A build context: a real directory inside the checkout (links resolved). Returns its absolute path. */
export async function contextDir(root: string, relative: string): Promise<string> {
  const resolved = await ensureInside(root, relative);
  const info = await lstat(resolved).catch(() => null);
  if (!info?.isDirectory())
    throw new RepositoryContentError(`build context ${relative} is not a directory in the repository`);
  return resolved;
}

async function ensureInside(root: string, relative: string): Promise<string> {
  const realRoot = await realpath(root);
  const resolved = await realpath(path.join(root, relative)).catch(() => {
    throw new RepositoryContentError(`${relative} does not exist in the repository`);
  });
  if (resolved !== realRoot && !resolved.startsWith(realRoot + path.sep))
    throw new RepositoryContentError(`${relative} points outside the repository`);
  return resolved;
}

/**
 * Bytes of everything under `root` (links counted, not followed), stopping once past `limit`
 * or `maxEntries` files: the answer only needs to say "too big".
 */
export async function treeBytes(root: string, limit: number, maxEntries = 200_000): Promise<number> {
  let total = 0;
  let entries = 0;
  const pending = [root];
  while (pending.length > 0 && total <= limit) {
    const dir = pending.pop()!;
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      entries += 1;
      if (entries > maxEntries) return Number.POSITIVE_INFINITY;
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) pending.push(full);
      else total += (await lstat(full)).size;
    }
  }
  return total;
}

/** Top-level names, for the analyzer's reasons and the LLM planner's summary. */
export async function topLevelNames(root: string): Promise<string[]> {
  return (await readdir(root)).filter((name) => name !== '.git').sort();
}
