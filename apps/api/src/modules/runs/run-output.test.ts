import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey, type KeyAction } from '@hostctl/auth-policy';
import { runOutputStreamKey } from '@hostctl/queue';
import { createHarness, json, type Harness } from '../../test-support/harness.js';
import { openSocket } from '../../test-support/ws-client.js';

// GET /api/runs/:id/output (docs/jobs.md#following-a-run). The worker's side is played by writing
// the run's Redis stream and row as run.processor.ts does: entries, then the final row, then `end`.
let h: Harness;
let customerId: string;
let operator: { auth: string };
let viewer: { auth: string };
let outsider: { auth: string };
let base: string;

beforeAll(async () => {
  h = await createHarness();
  customerId = (await h.customer()).id;
  operator = await h.user('operator', customerId);
  viewer = await h.user('viewer', customerId);
  outsider = await h.user('operator', (await h.customer()).id);
  base = await h.listen();
});
afterAll(async () => h.close());

async function runningRun(serviceId?: string): Promise<string> {
  serviceId ??= (await h.createService(operator.auth, { customer_id: customerId })).id;
  const run = await h.container.db.serviceRun.create({
    data: { serviceId, command: ['./migrate'], timeoutSeconds: 60, status: 'running', startedAt: new Date() },
  });
  return run.id;
}

/** A deploy token of the service (docs/auth.md#deploy-tokens). */
async function tokenFor(serviceId: string, actions: KeyAction[]): Promise<string> {
  const owner = await h.user('operator', customerId);
  const { key, digest } = generateApiKey();
  await h.container.db.apiKey.create({
    data: { userId: owner.id, name: 'ci', digest, serviceId, customerId, actions },
  });
  return `Bearer ${key}`;
}

const key = (runId: string) => runOutputStreamKey(h.config.QUEUE_PREFIX, runId);
const print = (runId: string, message: string, stream = 'stdout') =>
  h.container.redis.xadd(
    key(runId),
    '*',
    'ts',
    new Date().toISOString(),
    'stream',
    stream,
    'message',
    message,
  );

async function finish(runId: string, exitCode: number, output: string, withEnd = true) {
  await h.container.db.serviceRun.update({
    where: { id: runId },
    data: { status: exitCode === 0 ? 'succeeded' : 'failed', exitCode, output, finishedAt: new Date() },
  });
  if (withEnd) await h.container.redis.xadd(key(runId), '*', 'end', 'failed', 'exit_code', String(exitCode));
}

const follow = (runId: string, auth = operator.auth) =>
  openSocket(`ws://${base}/api/runs/${runId}/output?follow=true`, { authorization: auth });

describe('following a run’s output', () => {
  it('sends what is printed as it arrives, then the end with the exit code, and closes', async () => {
    const runId = await runningRun();
    await print(runId, 'first\n');
    const ws = follow(runId);
    await ws.opened;
    await ws.waitFor((all) => all.length === 1);
    expect(ws.messages[0]).toMatchObject({ stream: 'stdout', message: 'first\n' });
    // Still open while the run goes on; later output arrives on the same socket.
    await print(runId, 'second\n', 'stderr');
    await ws.waitFor((all) => all.length === 2);
    expect(ws.messages[1]).toMatchObject({ stream: 'stderr', message: 'second\n' });
    expect(ws.closeCode).toBeUndefined();
    await finish(runId, 3, 'first\nsecond\n');
    await ws.closed;
    expect(ws.closeCode).toBe(1000);
    expect(ws.messages.at(-1)).toEqual({
      type: 'end',
      status: 'failed',
      exit_code: 3,
      error: null,
      output_truncated: false,
    });
  });

  it('ends from the row when the worker never wrote its end entry', async () => {
    const runId = await runningRun();
    const ws = follow(runId);
    await ws.opened;
    await print(runId, 'partial\n');
    await finish(runId, 0, 'partial\n', false);
    await ws.closed;
    expect(ws.messages.map((m) => m.message ?? m.type)).toEqual(['partial\n', 'end']);
    expect(ws.messages.at(-1)).toMatchObject({ status: 'succeeded', exit_code: 0 });
  });

  it('sends a finished run’s stored output, not the live stream, then the end', async () => {
    const runId = await runningRun();
    await print(runId, 'streamed\n');
    await finish(runId, 3, 'stored\n');
    const ws = follow(runId);
    await ws.closed;
    expect(ws.messages.map((m) => m.message ?? m.type)).toEqual(['stored\n', 'end']);
    const snapshot = await h.app.inject({
      url: `/api/runs/${runId}/output`,
      headers: { authorization: operator.auth },
    });
    expect(json(snapshot)).toMatchObject({ status: 'failed', entries: [{ message: 'stored\n' }] });
  });

  it('answers the snapshot of a running run from its stream, without the end entry', async () => {
    const runId = await runningRun();
    await print(runId, 'one\n');
    const snapshot = await h.app.inject({
      url: `/api/runs/${runId}/output`,
      headers: { authorization: operator.auth },
    });
    expect(json(snapshot)).toMatchObject({ status: 'running', entries: [{ message: 'one\n' }] });
  });

  it('refuses viewers before the handshake and hides another customer’s run', async () => {
    const runId = await runningRun();
    await expect(follow(runId, viewer.auth).opened).rejects.toThrow(/refused with 403/);
    const other = follow(runId, outsider.auth);
    await other.closed;
    expect(other.closeCode).toBe(4404);
    expect(other.messages).toEqual([{ type: 'error', code: 'not_found', detail: `run ${runId} not found` }]);
  });

  it('lets a deploy token follow its service’s run only with the operate action', async () => {
    const { id: serviceId } = await h.createService(operator.auth, { customer_id: customerId });
    const runId = await runningRun(serviceId);
    const refused = follow(runId, await tokenFor(serviceId, ['read', 'deploy']));
    await expect(refused.opened).rejects.toThrow(/refused with 403/);
    const allowed = follow(runId, await tokenFor(serviceId, ['operate']));
    await allowed.opened;
    await print(runId, 'ci sees this\n');
    await allowed.waitFor((all) => all.length === 1);
    allowed.socket.close();
    await allowed.closed;
  });
});
