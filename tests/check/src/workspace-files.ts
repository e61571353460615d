import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parse } from 'yaml';

const run = promisify(execFile);
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

export interface CommandResult {
  code: number;
  output: string;
}

/** Runs a command (argument array, no shell) and returns its exit code and combined output. */
export async function command(cwd: string, file: string, args: string[]): Promise<CommandResult> {
  try {
    const { stdout, stderr } = await run(file, args, { cwd, maxBuffer: 64 * 1024 * 1024 });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return {
      code: typeof failed.code === 'number' ? failed.code : 1,
      output: `${failed.stdout}${failed.stderr}`,
    };
  }
}

/** Tracked files plus new files git does not ignore, so uncommitted work is included. */
export async function treeFiles(): Promise<string[]> {
  const listed = await command(ROOT, 'git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard']);
  if (listed.code !== 0) throw new Error(`git ls-files failed: ${listed.output}`);
  return listed.output.split('\0').filter(Boolean);
}

/** Every workspace directory of pnpm-workspace.yaml, expanded (one level of `*`). */
export async function workspaces(): Promise<string[]> {
  const manifest = parse(await readFile(path.join(ROOT, 'pnpm-workspace.yaml'), 'utf8')) as {
    packages: string[];
  };
  const packageJsons = (await treeFiles()).filter((file) => file.endsWith('/package.json'));
  return manifest.packages.flatMap((pattern) => {
    const matcher = new RegExp(`^${pattern.replace('*', '[^/]+')}$`);
    return packageJsons.map((file) => path.dirname(file)).filter((dir) => matcher.test(dir));
  });
}
