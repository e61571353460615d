// `pnpm install && pnpm typecheck` on a fresh copy of the tree (no node_modules, no generated
// Prisma client), with one type error planted in every workspace: the one typecheck program must
// report each planted error and nothing else. A workspace left out of it (as apps/worker once was)
// or a fresh clone that cannot generate the Prisma client offline fails this test.
import { appendFile, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { command, freshCopy, workspaces } from './fresh-copy.js';

let copy = '';

afterAll(async () => {
  if (copy) await rm(copy, { recursive: true, force: true });
});

/** The first TypeScript source file of a workspace (its src folder, else its top folder). */
async function firstSource(root: string, workspace: string): Promise<string> {
  for (const dir of [path.join(workspace, 'src'), workspace]) {
    const entries = await readdir(path.join(root, dir)).catch(() => [] as string[]);
    const file = entries.filter((name) => name.endsWith('.ts') && !name.endsWith('.d.ts')).sort()[0];
    if (file) return path.join(dir, file);
  }
  throw new Error(`${workspace} has no TypeScript file`);
}

describe('pnpm typecheck on a fresh copy', () => {
  const planted: string[] = [];

  beforeAll(async () => {
    copy = await freshCopy();
    const install = await command(copy, 'pnpm', ['install', '--offline', '--frozen-lockfile']);
    if (install.code !== 0) throw new Error(`pnpm install failed in the fresh copy:\n${install.output}`);
  });

  it('covers every workspace: an error planted in each one is reported, and nothing else', async () => {
    const all = await workspaces();
    expect(all).toEqual(expect.arrayContaining(['apps/api', 'apps/worker', 'packages/db', 'bench']));
    for (const workspace of all) {
      const file = await firstSource(copy, workspace);
      await appendFile(path.join(copy, file), "\nexport const plantedTypeError: number = 'not a number';\n");
      planted.push(file);
    }

    const result = await command(copy, 'pnpm', ['-s', 'typecheck']);
    expect(result.code).not.toBe(0);
    const errors = result.output.split('\n').filter((line) => /error TS\d+/.test(line));
    const reported = new Set(errors.map((line) => line.slice(0, line.indexOf('('))));
    expect([...reported].sort()).toEqual([...planted].sort());
    // A file both programs check (apps/web imports @hostctl/auth-policy/permissions) is reported
    // by each of them: the same line twice is one error.
    expect(new Set(errors).size).toBe(planted.length);
  });
});
