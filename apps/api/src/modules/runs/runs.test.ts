import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey, type KeyAction } from '@hostctl/auth-policy';
import { createHarness, json, type Harness } from '../../test-support/harness.js';
import { addDeployment } from '../../test-support/releases.js';

// POST/GET runs without a worker: what the API accepts, refuses and shows (docs/jobs.md).
let h: Harness;
let customerId: string;
let operator: { auth: string };

const PLAN = {
  containers: [
    { name: 'web', image: 'local/busybox:1', environment: {}, labels: {}, volumes: [] },
    { name: 'db', image: 'local/busybox:1', environment: {}, labels: {}, volumes: [] },
  ],
  volumes: [],
};

beforeAll(async () => {
  h = await createHarness();
  customerId = (await h.customer()).id;
  operator = await h.user('operator', customerId);
});
afterAll(async () => h.close());

async function releasedService(): Promise<string> {
  const { id } = await h.createService(operator.auth, { customer_id: customerId });
  await addDeployment(h, id, { plan: PLAN });
  return id;
}

const post = (serviceId: string, payload: unknown, auth = operator.auth) =>
  h.app.inject({
    method: 'POST',
    url: `/api/services/${serviceId}/runs`,
    headers: { authorization: auth },
    payload: payload as object,
  });

describe('POST /api/services/:id/runs', () => {
  it('records a queued run with the defaults and the release it runs from', async () => {
    const serviceId = await releasedService();
    const response = await post(serviceId, { command: ['./migrate', '--all'], component: 'db' });
    expect(response.statusCode, response.body).toBe(202);
    expect(json(response)).toMatchObject({
      service_id: serviceId,
      command: ['./migrate', '--all'],
      component: 'db',
      timeout: 600,
      status: 'queued',
      exit_code: null,
      output: '',
    });
    const job = await h.container.producer.queue('runs').getJob(`run.${json(response).id as string}`);
    expect(job?.data).toEqual({ runId: json(response).id });
  });

  it.each([
    ['an empty command', { command: [] }, 'command'],
    ['an empty program', { command: ['  ', 'x'] }, 'command'],
    ['a shell string', { command: 'echo hi' }, 'command'],
    ['an oversize command', { command: Array.from({ length: 9 }, () => 'x'.repeat(8000)) }, 'command'],
    ['too many arguments', { command: Array.from({ length: 257 }, () => 'x') }, 'command'],
    ['an unknown component', { command: ['true'], component: 'worker' }, 'component'],
    ['a zero timeout', { command: ['true'], timeout: 0 }, 'timeout'],
    ['a timeout over an hour', { command: ['true'], timeout: 3601 }, 'timeout'],
    ['an unknown field', { command: ['true'], shell: true }, 'shell'],
  ])('refuses %s with a problem naming the field', async (_label, payload, field) => {
    const serviceId = await releasedService();
    const response = await post(serviceId, payload);
    expect(response.statusCode, response.body).toBe(400);
    const problem = json<{ detail: string; errors?: { path: string }[] }>(response);
    expect(`${problem.detail} ${JSON.stringify(problem.errors ?? [])}`).toContain(field);
    expect(await h.container.db.serviceRun.count({ where: { serviceId } })).toBe(0);
  });

  it('answers 409 for a service with no release yet', async () => {
    const { id } = await h.createService(operator.auth, { customer_id: customerId });
    const response = await post(id, { command: ['true'] });
    expect(response.statusCode).toBe(409);
    expect(json(response).detail).toMatch(/no release to run from/);
  });

  it("answers 404 for another customer's service, and records nothing", async () => {
    const serviceId = await releasedService();
    const other = await h.user('operator', (await h.customer()).id);
    const response = await post(serviceId, { command: ['true'] }, other.auth);
    expect(response.statusCode).toBe(404);
    expect(await h.container.db.serviceRun.count({ where: { serviceId } })).toBe(0);
  });
});

describe('GET /api/runs/:id and the history', () => {
  it('shows the outcome with its duration; the page leaves the output out', async () => {
    const serviceId = await releasedService();
    const startedAt = new Date('2026-01-01T00:00:00Z');
    const run = await h.container.db.serviceRun.create({
      data: {
        serviceId,
        command: ['sh', '-c', 'exit 3'],
        timeoutSeconds: 60,
        status: 'failed',
        exitCode: 3,
        output: 'boom\n',
        startedAt,
        finishedAt: new Date(startedAt.getTime() + 1500),
      },
    });
    const one = await h.app.inject({ url: `/api/runs/${run.id}`, headers: { authorization: operator.auth } });
    expect(json(one)).toMatchObject({ status: 'failed', exit_code: 3, output: 'boom\n', duration_ms: 1500 });
    const page = await h.app.inject({
      url: `/api/services/${serviceId}/runs`,
      headers: { authorization: operator.auth },
    });
    expect(json(page)).toMatchObject({ total: 1, page: 1, per_page: 20 });
    expect(json<{ data: object[] }>(page).data[0]).not.toHaveProperty('output');
  });
});

describe('deploy tokens (docs/jobs.md#who-may-run)', () => {
  async function tokenFor(serviceId: string, actions: KeyAction[]): Promise<string> {
    const owner = await h.user('operator', customerId);
    const { key, digest } = generateApiKey();
    await h.container.db.apiKey.create({
      data: { userId: owner.id, name: 'ci', digest, serviceId, customerId, actions },
    });
    return `Bearer ${key}`;
  }

  it('a token of the service with operate runs and reads its own run', async () => {
    const serviceId = await releasedService();
    const token = await tokenFor(serviceId, ['operate']);
    const created = await post(serviceId, { command: ['true'] }, token);
    expect(created.statusCode, created.body).toBe(202);
    const read = await h.app.inject({
      url: `/api/runs/${json(created).id as string}`,
      headers: { authorization: token },
    });
    expect(read.statusCode, read.body).toBe(200);
  });

  it('a token without operate, or of another service, is refused with the limit named', async () => {
    const serviceId = await releasedService();
    const deployOnly = await tokenFor(serviceId, ['read', 'deploy']);
    const refused = await post(serviceId, { command: ['true'] }, deployOnly);
    expect(refused.statusCode).toBe(403);
    expect(json(refused).detail).toMatch(/this route needs operate/);
    const run = json(await post(serviceId, { command: ['true'] })).id as string;
    const otherService = await tokenFor(await releasedService(), ['operate']);
    const read = await h.app.inject({ url: `/api/runs/${run}`, headers: { authorization: otherService } });
    expect(read.statusCode).toBe(403);
    expect(json(read).detail).toMatch(/limited to service/);
  });
});
