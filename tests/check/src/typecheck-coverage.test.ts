// `pnpm typecheck` runs the TypeScript programs its script names (tsconfig.json for the workspace,
// apps/web/tsconfig.json for the dashboard). Every TypeScript file of every workspace must be in one
// of them: a workspace left out (as apps/worker once was) is never type-checked and nothing else
// notices. The programs' file lists come from tsc itself (`--listFilesOnly`: resolved as for a
// check, without checking), so the include and exclude patterns are read exactly as tsc reads them.
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ROOT, treeFiles, workspaces } from './workspace-files.js';

const run = promisify(execFile);
const TSC = path.join(ROOT, 'node_modules/typescript/bin/tsc');

/** The `-p` projects of the typecheck script, in its order. */
async function typecheckProjects(): Promise<string[]> {
  const manifest = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  return [...manifest.scripts.typecheck!.matchAll(/\btsc -p ([^\s;&|]+)/g)].map((match) => match[1]!);
}

async function filesOf(project: string): Promise<string[]> {
  const { stdout } = await run(process.execPath, [TSC, '-p', project, '--listFilesOnly'], {
    cwd: ROOT,
    maxBuffer: 64 * 1024 * 1024,
  });
  return stdout
    .split('\n')
    .filter(Boolean)
    .map((file) => path.relative(ROOT, file));
}

describe('pnpm typecheck', () => {
  it('checks every TypeScript file of every workspace', async () => {
    const projects = await typecheckProjects();
    expect(projects).toEqual(['tsconfig.json', 'apps/web/tsconfig.json']);
    const checked = new Set((await Promise.all(projects.map(filesOf))).flat());

    const all = await workspaces();
    expect(all).toEqual(expect.arrayContaining(['apps/api', 'apps/worker', 'packages/db', 'bench']));
    const sources = (await treeFiles()).filter((file) => /\.tsx?$/.test(file) && !file.endsWith('.d.ts'));
    for (const workspace of all) {
      const own = sources.filter((file) => file.startsWith(`${workspace}/`));
      expect(own.length, `${workspace} has TypeScript files`).toBeGreaterThan(0);
      expect(
        own.filter((file) => !checked.has(file)),
        `${workspace}: files no typecheck program includes`,
      ).toEqual([]);
    }
  });
});
