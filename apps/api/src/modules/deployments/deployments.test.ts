import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deploymentChannel } from '@hostctl/queue';
import { createHarness, json, type Harness } from '../../test-support/harness.js';
import { openSocket } from '../../test-support/ws-client.js';

// The worker is simulated: the test writes deployment rows and publishes the wake-up it would.
let h: Harness;
let operator: { auth: string };
let outsider: { auth: string };
let base: string;

beforeAll(async () => {
  h = await createHarness();
  operator = await h.user('operator');
  outsider = await h.user('viewer', (await h.customer()).id);
  base = await h.listen();
});
afterAll(async () => h.close());

const deployment = async () => (await h.createService(operator.auth)).deploy_job_id;

async function appendLog(id: string, seq: number, message: string) {
  await h.container.db.deploymentLog.create({ data: { deploymentId: id, seq, stream: 'stdout', message } });
  await h.container.redis.publish(deploymentChannel(h.config.QUEUE_PREFIX, id), 'changed');
}

async function finish(
  id: string,
  status: 'succeeded' | 'failed' | 'rolled_back',
  error: string | null = null,
) {
  await h.container.db.deployment.update({ where: { id }, data: { status, error, finishedAt: new Date() } });
  await h.container.redis.publish(deploymentChannel(h.config.QUEUE_PREFIX, id), 'changed');
}

const get = (id: string, query = '', auth = operator.auth) =>
  h.app.inject({ url: `/api/deployments/${id}${query}`, headers: { authorization: auth } });

describe('GET /api/deployments/:id', () => {
  it('shows the deployment behind deploy_job_id with its log', async () => {
    const id = await deployment();
    await appendLog(id, 1, 'pulling image');
    await appendLog(id, 2, 'starting');
    const body = json(await get(id));
    expect(body).toMatchObject({
      id,
      status: 'queued',
      trigger: 'create',
      deploy_method: 'compose',
      last_seq: 2,
    });
    expect(body.logs).toEqual([
      expect.objectContaining({ seq: 1, message: 'pulling image' }),
      expect.objectContaining({ seq: 2, message: 'starting' }),
    ]);
    const after = json<{ logs: { seq: number }[] }>(await get(id, '?after_seq=1'));
    expect(after.logs.map((l) => l.seq)).toEqual([2]);
  });

  it('wait=N answers as soon as the deployment is final', async () => {
    const id = await deployment();
    const pending = get(id, '?wait=20');
    setTimeout(() => void finish(id, 'failed', 'step create failed: image missing'), 300);
    const started = Date.now();
    const body = json(await pending);
    expect(body).toMatchObject({ status: 'failed', error: 'step create failed: image missing' });
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('wait=N treats rolled_back as final and shows what the release ran', async () => {
    const id = await deployment();
    await h.container.db.deployment.update({
      where: { id },
      data: {
        status: 'running',
        imageDigests: { web: 'local/busybox@sha256:' + 'd'.repeat(64) },
        updateOrder: 'start-first',
      },
    });
    // 300 s is past the test timeout: only a final status answers in time.
    const pending = get(id, '?wait=300');
    setTimeout(() => void finish(id, 'rolled_back', 'the new release exited during drain'), 300);
    expect(json(await pending)).toMatchObject({
      status: 'rolled_back',
      image_digests: { web: `local/busybox@sha256:${'d'.repeat(64)}` },
      update_order: 'start-first',
      rollback_of: null,
    });
  });

  it('wait=0 answers at once', async () => {
    expect(json(await get(await deployment(), '?wait=0')).status).toBe('queued');
  });

  it('scoped to the customer of its service', async () => {
    expect((await get(await deployment(), '', outsider.auth)).statusCode).toBe(404);
  });

  it.each(['?wait=301', '?wait=-1', '?after_seq=x'])('%s → 400', async (query) => {
    expect((await get(await deployment(), query)).statusCode).toBe(400);
  });
});

describe('WebSocket on /api/deployments/:id', () => {
  it('ends when the deployment is rolled back', async () => {
    const id = await deployment();
    const ws = openSocket(`ws://${base}/api/deployments/${id}`, { authorization: operator.auth });
    await ws.opened;
    await ws.waitFor((m) => m.some((x) => x.type === 'status'));
    await finish(id, 'rolled_back', 'the new release exited during drain');
    await ws.closed;
    expect(ws.messages.at(-1)).toMatchObject({ type: 'end', status: 'rolled_back' });
    expect(ws.closeCode).toBe(1000);
  });

  it('streams log lines and status, then ends with the final status', async () => {
    const id = await deployment();
    await appendLog(id, 1, 'first');
    const ws = openSocket(`ws://${base}/api/deployments/${id}`, { authorization: operator.auth });
    await ws.opened;
    await ws.waitFor((m) => m.some((x) => x.type === 'status'));
    await appendLog(id, 2, 'second');
    await ws.waitFor((m) => m.some((x) => x.message === 'second'));
    await finish(id, 'succeeded');
    await ws.closed;
    const types = ws.messages.map((m) => m.type);
    expect(ws.messages.filter((m) => m.type === 'log').map((m) => m.message)).toEqual(['first', 'second']);
    expect(types.at(-1)).toBe('end');
    expect(ws.messages.at(-1)).toMatchObject({ status: 'succeeded' });
    expect(ws.closeCode).toBe(1000);
  });
});
