import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '@hostctl/auth-policy';
import { createHarness, json, type Harness } from '../../test-support/harness.js';
import { addDeployment } from '../../test-support/releases.js';
import { openSocket } from '../../test-support/ws-client.js';

// GET /api/services/:id/exec (docs/jobs.md#terminal) on the real API, database and Redis, without
// a worker: what the API decides alone (refusals before the upgrade, the session row, the audit
// event, the idle timeout, the per-customer bound). The worker's side is in tests/e2e exec-terminal.
const IDLE_MS = 1500;
let h: Harness;
let customerId: string;
let execKey: string;
let base: string;

const PLAN = {
  containers: [
    { name: 'web', image: 'local/busybox:1', environment: {}, labels: {}, volumes: [] },
    { name: 'worker', image: 'local/busybox:1', environment: {}, labels: {}, volumes: [] },
  ],
  volumes: [],
  web: { container: 'web', port: 8080 },
};

async function releasedService(): Promise<string> {
  const operator = await h.user('operator', customerId);
  const id = (await h.createService(operator.auth, { customer_id: customerId })).id;
  await addDeployment(h, id, { plan: PLAN });
  return id;
}

beforeAll(async () => {
  h = await createHarness({ EXEC_IDLE_TIMEOUT_MS: String(IDLE_MS), EXEC_MAX_PER_CUSTOMER: '2' });
  customerId = (await h.customer()).id;
  const owner = await h.user('operator', customerId);
  const { key, digest } = generateApiKey();
  await h.container.db.apiKey.create({ data: { userId: owner.id, name: 'exec', digest, actions: ['exec'] } });
  execKey = `Bearer ${key}`;
  base = await h.listen();
});
afterAll(async () => h.close());

const get = (url: string) => h.app.inject({ method: 'GET', url, headers: { authorization: execKey } });

describe('refusals come before the upgrade, as problems', () => {
  it('a plain GET that passes every check answers what the terminal would open (a preflight)', async () => {
    const id = await releasedService();
    const response = await get(`/api/services/${id}/exec`);
    expect(response.statusCode).toBe(200);
    expect(json(response)).toEqual({ service_id: id, component: 'web', command: ['/bin/sh'] });
    const worker = await get(`/api/services/${id}/exec?component=worker&cmd=ps&cmd=aux`);
    expect(json(worker)).toMatchObject({ component: 'worker', command: ['ps', 'aux'] });
  });

  it('a service without a release is 409, an unknown component 400 naming the parameter', async () => {
    const operator = await h.user('operator', customerId);
    const bare = (await h.createService(operator.auth, { customer_id: customerId })).id;
    expect((await get(`/api/services/${bare}/exec`)).statusCode).toBe(409);
    const unknown = await get(`/api/services/${await releasedService()}/exec?component=nope`);
    expect(unknown.statusCode).toBe(400);
    expect(JSON.stringify(json(unknown))).toContain('/querystring/component');
  });

  it('an empty first argument is 400', async () => {
    const response = await get(`/api/services/${await releasedService()}/exec?cmd=`);
    expect(response.statusCode).toBe(400);
  });
});

describe('an open terminal', () => {
  const keys = (id: string) => ({
    input: `${h.config.QUEUE_PREFIX}:exec:${id}:in`,
    output: `${h.config.QUEUE_PREFIX}:exec:${id}:out`,
  });
  const sessionOf = async (serviceId: string) => {
    for (let i = 0; i < 100; i++) {
      const found = await h.container.db.execSession.findFirst({ where: { serviceId } });
      if (found) return found;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error('no exec session recorded');
  };

  it('relays input to the worker and its output and exit back; audited with the container, never the input', async () => {
    const serviceId = await releasedService();
    const ws = openSocket(`ws://${base}/api/services/${serviceId}/exec?component=worker&cmd=sh&cmd=-i`, {
      authorization: execKey,
    });
    await ws.opened;
    ws.socket.send(JSON.stringify({ type: 'resize', cols: 120, rows: 40 }));
    ws.socket.send(JSON.stringify({ type: 'stdin', data: 'typed-secret-value\r' }));
    ws.socket.send(JSON.stringify({ type: 'stdin', data: 42 }));
    const session = await sessionOf(serviceId);
    expect(session).toMatchObject({ component: 'worker', command: ['sh', '-i'], customerId });
    // The worker's side, as exec.processor.ts writes it.
    const { input, output } = keys(session.id);
    await h.container.redis.xadd(output, '*', 't', 'ready', 'container', 'hostctl-abc-worker-1');
    await h.container.redis.xadd(output, '*', 't', 'output', 'd', 'hello\r\n');
    await ws.waitFor((messages) => messages.some((m) => m.type === 'output'));
    await h.container.redis.xadd(output, '*', 't', 'exit', 'code', '7');
    await ws.closed;
    expect(ws.closeCode).toBe(1000);
    expect(ws.messages).toEqual([
      { type: 'ready', container: 'hostctl-abc-worker-1' },
      { type: 'output', data: 'hello\r\n' },
      { type: 'exit', exit_code: 7 },
    ]);
    // The malformed frame (data not a string) was dropped; the API said close at the end.
    const frames = (await h.container.redis.xrange(input, '-', '+')).map(([, fields]) => fields);
    expect(frames).toEqual([
      ['t', 'resize', 'c', '120', 'r', '40'],
      ['t', 'stdin', 'd', 'typed-secret-value\r'],
      ['t', 'close'],
    ]);
    expect(await h.container.redis.ttl(input)).toBeGreaterThan(0);

    const events = await h.container.db.auditEvent.findMany({
      where: { targetId: serviceId, action: 'services.exec' },
    });
    expect(events).toEqual([
      expect.objectContaining({
        statusCode: 101,
        targetType: 'service',
        subject: 'hostctl-abc-worker-1: sh -i',
      }),
    ]);
    expect(JSON.stringify(await h.container.db.auditEvent.findMany())).not.toContain('typed-secret-value');
  });

  it('is closed 4408 after EXEC_IDLE_TIMEOUT_MS without input, output or not', async () => {
    const serviceId = await releasedService();
    const ws = openSocket(`ws://${base}/api/services/${serviceId}/exec`, { authorization: execKey });
    await ws.opened;
    const opened = Date.now();
    const { output } = keys((await sessionOf(serviceId)).id);
    await h.container.redis.xadd(output, '*', 't', 'ready', 'container', 'c');
    // Output keeps coming (a `top`), but nobody types: still idle.
    const chatter = setInterval(() => void h.container.redis.xadd(output, '*', 't', 'output', 'd', '.'), 100);
    await ws.closed;
    clearInterval(chatter);
    expect(ws.closeCode).toBe(4408);
    expect(Date.now() - opened).toBeGreaterThanOrEqual(IDLE_MS - 100);
    expect(ws.messages.at(-1)).toMatchObject({ type: 'error', code: 'operation_timeout' });
    expect(String(ws.messages.at(-1)?.detail)).toContain('EXEC_IDLE_TIMEOUT_MS');
  });

  it('holds at most EXEC_MAX_PER_CUSTOMER terminals per customer, then frees the slots', async () => {
    const services = [await releasedService(), await releasedService(), await releasedService()];
    const open = services
      .slice(0, 2)
      .map((id) => openSocket(`ws://${base}/api/services/${id}/exec`, { authorization: execKey }));
    await Promise.all(open.map((ws) => ws.opened));
    const refused = await get(`/api/services/${services[2]}/exec`);
    // A plain GET claims no slot: the bound is checked on the upgrade.
    expect(refused.statusCode).toBe(200);
    const third = openSocket(`ws://${base}/api/services/${services[2]}/exec`, { authorization: execKey });
    await expect(third.opened).rejects.toThrow(/refused with 429/);
    for (const ws of open) ws.socket.close();
    await Promise.all(open.map((ws) => ws.closed));
    await new Promise((resolve) => setTimeout(resolve, 300));
    const again = openSocket(`ws://${base}/api/services/${services[2]}/exec`, { authorization: execKey });
    await again.opened;
    again.socket.close();
    await again.closed;
  });
});
