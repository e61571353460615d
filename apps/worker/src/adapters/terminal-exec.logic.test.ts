import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTerminalExec, TerminalUnavailable } from './terminal-exec.js';

/**
 * A node's engine behind a forwarded socket whose node died: the forward still accepts the
 * connection and never answers (what `ssh -L` does once the far end is gone). A terminal there
 * must end with the reason, not wait for the API's 4503 (docs/jobs.md#terminals-under-swarm).
 */
let dir = '';
let silent: Server;
const held: Socket[] = [];

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'hostctl-silent-engine-'));
  silent = createServer((socket) => void held.push(socket));
  await new Promise<void>((resolve) => silent.listen(path.join(dir, 'docker.sock'), resolve));
});

afterAll(async () => {
  for (const socket of held) socket.destroy();
  await new Promise((resolve) => silent.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

describe('a terminal on an engine that never answers', () => {
  it('gives up after openTimeoutMs with a reason naming the engine', async () => {
    const exec = createTerminalExec({
      socketPath: path.join(dir, 'docker.sock'),
      openTimeoutMs: 300,
      engineName: 'node node-b',
    });
    const opening = exec.open('0123456789ab', ['sh']);
    await expect(opening).rejects.toBeInstanceOf(TerminalUnavailable);
    await expect(opening).rejects.toThrow('node node-b did not open the exec within 0.3 s');
    // The engine was asked: the bound is on a real request, not a refusal before it.
    expect(held.length).toBeGreaterThan(0);
  });
});
