import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './free-port.js';

/**
 * A git server for tests: bare repositories under a temporary directory, served by
 * `git daemon` on 127.0.0.1 (git://, allowed because tests allowlist 127.0.0.1). Every git
 * command is an argument array; nothing goes through a shell.
 */
const run = promisify(execFile);
const git = (cwd: string, ...args: string[]) =>
  run('git', ['-c', 'user.name=hostctl-test', '-c', 'user.email=test@hostctl.invalid', ...args], { cwd });

export interface TestRepo {
  url: string;
  /** Commits `files` (path → content) on `branch` and pushes; returns the new commit. */
  push(files: Record<string, string>, branch?: string): Promise<string>;
}

export interface GitServer {
  port: number;
  repo(name: string): Promise<TestRepo>;
  close(): Promise<void>;
}

export async function startGitServer(): Promise<GitServer> {
  const base = await mkdtemp(path.join(os.tmpdir(), 'hostctl-git-test-'));
  const port = await freePort();
  const daemon: ChildProcess = spawn(
    'git',
    [
      'daemon',
      '--listen=127.0.0.1',
      `--port=${port}`,
      '--export-all',
      '--reuseaddr',
      `--base-path=${base}`,
      base,
    ],
    { stdio: 'ignore' },
  );
  await waitForPort(port);
  return {
    port,
    async repo(name) {
      const bare = path.join(base, `${name}.git`);
      await run('git', ['init', '--quiet', '--bare', '--initial-branch=main', bare]);
      const work = path.join(base, `${name}-work`);
      await mkdir(work);
      await git(work, 'init', '--quiet', '--initial-branch=main');
      return {
        url: `git://127.0.0.1:${port}/${name}.git`,
        async push(files, branch = 'main') {
          await git(work, 'checkout', '--quiet', '-B', branch);
          for (const [file, content] of Object.entries(files)) {
            await mkdir(path.dirname(path.join(work, file)), { recursive: true });
            await writeFile(path.join(work, file), content);
          }
          await git(work, 'add', '--all');
          await git(
            work,
            'commit',
            '--quiet',
            '--allow-empty',
            '-m',
            `update ${Object.keys(files).join(', ')}`,
          );
          await git(work, 'push', '--quiet', '--force', bare, `${branch}:${branch}`);
          return (await git(work, 'rev-parse', 'HEAD')).stdout.trim();
        },
      };
    },
    async close() {
      daemon.kill('SIGTERM');
      await rm(base, { recursive: true, force: true });
    },
  };
}

async function waitForPort(port: number): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const isOpen = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.end();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (isOpen) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`git daemon did not listen on 127.0.0.1:${port}`);
}
