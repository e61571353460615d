// The dev stack runs api, worker and dev-idp under scripts/lib/supervise.sh: a process that exits
// is started again and the exit is logged, while a deliberate stop (TERM, as stack-down.sh sends)
// ends it for good. Exercised with a stand-in command so no app has to crash for real.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ROOT } from './stack.js';

const SUPERVISE = path.join(ROOT, 'scripts/lib/supervise.sh');

const running: ChildProcess[] = [];
let dir = '';

afterEach(async () => {
  for (const child of running.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  if (dir) await rm(dir, { recursive: true, force: true });
});

function supervise(script: string): { child: ChildProcess; output: () => string } {
  let output = '';
  const child = spawn('bash', [SUPERVISE, 'stand-in', 'sh', '-c', script], { stdio: 'pipe' });
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  running.push(child);
  return { child, output: () => output };
}

async function until(
  check: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const exited = (child: ChildProcess) => new Promise<number | null>((resolve) => child.once('exit', resolve));

describe('dev stack supervision', () => {
  it('starts a process again after it exits and logs each exit with its code', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'supervise-'));
    const starts = path.join(dir, 'starts');
    // Each run appends a line, then exits with code 3: the supervisor must run it again.
    const { output } = supervise(`echo run >> ${starts}; exit 3`);

    await until(
      async () => (await readFile(starts, 'utf8').catch(() => '')).split('\n').length > 3,
      'two restarts',
    );
    expect(output()).toMatch(/supervise: stand-in exited with code 3; restarting in 1s/);
    expect(output()).toMatch(/supervise: stand-in exited with code 3; restarting in 2s/);
  });

  it('stops for good on TERM: the child ends and is not started again', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'supervise-'));
    const starts = path.join(dir, 'starts');
    const { child, output } = supervise(`echo run >> ${starts}; exec sleep 300`);
    await until(async () => (await readFile(starts, 'utf8').catch(() => '')) !== '', 'the first start');

    const done = exited(child);
    child.kill('SIGTERM');
    expect(await done).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect((await readFile(starts, 'utf8')).trim().split('\n')).toEqual(['run']);
    expect(output()).not.toMatch(/restarting/);
  });
});
