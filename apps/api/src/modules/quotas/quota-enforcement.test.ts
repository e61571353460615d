import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { createHarness, json, uniqueName, type Harness } from '../../test-support/harness.js';
import { addDeployment } from '../../test-support/releases.js';

/**
 * Issue 31: every path that adds usage is counted against the customer's quotas, and a refusal is
 * one problem (409 quota_exceeded) naming the quota, its limit, the usage and what was asked for.
 * Each test has a customer of its own, with overrides written as an unscoped admin would.
 */
let h: Harness;
let admin: { auth: string };

beforeAll(async () => {
  h = await createHarness();
  admin = await h.user('admin');
});
afterAll(async () => h?.close());

interface QuotaProblem {
  code: string;
  status: number;
  detail: string;
  quota: { name: string; limit: number; usage: number; requested: number };
}

/** A fresh customer with these overrides and an operator of its own. */
async function tenant(overrides: Record<string, number | null>) {
  const customerId = (await h.customer()).id;
  const set = await h.app.inject({
    method: 'PUT',
    url: `/api/customers/${customerId}/quota`,
    headers: { authorization: admin.auth },
    payload: { plan: 'default', overrides },
  });
  expect(set.statusCode).toBe(200);
  return { customerId, auth: (await h.user('operator', customerId)).auth };
}

/**
 * web: `replicas` × (memory, 0.25 CPU). The variable MEM (default 64m) can change the memory
 * limit through PATCH; replicas are a number in the document (an interpolated one is a string,
 * which the parser refuses).
 */
const compose = (replicas = 1) =>
  `services:\n  web:\n    image: local/busybox:1\n    ports: ["8080"]\n    deploy:\n      replicas: ${replicas}\n      resources: {limits: {memory: "\${MEM:-64m}", cpus: "0.25"}}\n`;

const create = (t: { customerId: string; auth: string }, payload: Record<string, unknown> = {}) =>
  h.app.inject({
    method: 'POST',
    url: '/api/services',
    headers: { authorization: t.auth },
    payload: {
      name: uniqueName('q'),
      customer_id: t.customerId,
      deploy_method: 'compose',
      compose: compose(),
      ...payload,
    },
  });

const post = (auth: string, url: string, payload?: object) =>
  h.app.inject({ method: 'POST', url, headers: { authorization: auth }, ...(payload ? { payload } : {}) });

/** The first deployment as the worker would have finished it, so a later one is not coalesced. */
async function settled(response: LightMyRequestResponse) {
  expect(response.statusCode).toBe(201);
  const created = json<{ id: string; deploy_job_id: string }>(response);
  await h.container.db.deployment.update({
    where: { id: created.deploy_job_id },
    data: { status: 'succeeded' },
  });
  return created.id;
}

function expectRefusal(response: LightMyRequestResponse, quota: QuotaProblem['quota']) {
  expect(response.statusCode).toBe(409);
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  const problem = json<QuotaProblem>(response);
  expect(problem).toMatchObject({ code: 'quota_exceeded', status: 409, quota });
  expect(problem.detail).toContain(`quota ${quota.name} exceeded`);
}

describe('create', () => {
  it('services: the create past the limit is refused, naming limit, usage and request', async () => {
    const t = await tenant({ services: 1 });
    await settled(await create(t));
    expectRefusal(await create(t), { name: 'services', limit: 1, usage: 1, requested: 1 });
  });

  it('containers: replicas are counted', async () => {
    const t = await tenant({ containers: 3 });
    await settled(await create(t, { compose: compose(2) }));
    expectRefusal(await create(t, { compose: compose(2) }), {
      name: 'containers',
      limit: 3,
      usage: 2,
      requested: 2,
    });
    expect((await create(t)).statusCode).toBe(201);
  });

  it('memory_mb and cpus: limits summed with replicas', async () => {
    const memory = await tenant({ memory_mb: 256 });
    await settled(await create(memory, { compose: compose(2), variables: { MEM: '100m' } }));
    expectRefusal(await create(memory, { variables: { MEM: '100m' } }), {
      name: 'memory_mb',
      limit: 256,
      usage: 200,
      requested: 100,
    });
    const cpu = await tenant({ cpus: 0.5 });
    await settled(await create(cpu, { compose: compose(2) }));
    expectRefusal(await create(cpu), { name: 'cpus', limit: 0.5, usage: 0.5, requested: 0.25 });
  });

  it('templates count like any other create', async () => {
    const t = await tenant({ services: 0 });
    const response = await create(t, {
      deploy_method: 'template',
      template_id: 'busybox-web',
      compose: undefined,
    });
    expectRefusal(response, { name: 'services', limit: 0, usage: 0, requested: 1 });
  });

  it('git services claim one container with the default limits until the worker reads the repository', async () => {
    const t = await tenant({ memory_mb: 511 });
    const response = await create(t, {
      deploy_method: 'git',
      compose: undefined,
      git_url: 'https://git.example.com/acme/app.git',
      git_branch: 'main',
    });
    expectRefusal(response, { name: 'memory_mb', limit: 511, usage: 0, requested: 512 });
  });
});

describe('PATCH, redeploy and rollback', () => {
  it('PATCH variables that raise the memory limits are refused; what does not grow passes', async () => {
    const t = await tenant({ containers: 2, memory_mb: 128 });
    const id = await settled(await create(t));
    const patch = (variables: Record<string, string>) =>
      h.app.inject({
        method: 'PATCH',
        url: `/api/services/${id}`,
        headers: { authorization: t.auth },
        payload: { variables },
      });
    expectRefusal(await patch({ MEM: '200m' }), { name: 'memory_mb', limit: 128, usage: 64, requested: 136 });
    expect((await patch({ GREETING: 'hello' })).statusCode).toBe(200);
    expect(await h.container.db.service.findUniqueOrThrow({ where: { id } })).toMatchObject({
      containers: 1,
      claimedMemoryMb: 64,
      claimedMillicpus: 250,
    });
    // Shrinking is always allowed, and the service then claims less.
    expect((await patch({ MEM: '32m' })).statusCode).toBe(200);
    expect((await h.container.db.service.findUniqueOrThrow({ where: { id } })).claimedMemoryMb).toBe(32);
  });

  it('deploys_per_hour: create and redeploy count; a redeploy joining a queued one does not', async () => {
    const t = await tenant({ deploys_per_hour: 2 });
    const id = await settled(await create(t));
    const first = await post(t.auth, `/api/services/${id}/redeploy`);
    expect(first.statusCode).toBe(200);
    // Still queued: the next redeploy joins it and adds no deployment.
    expect((await post(t.auth, `/api/services/${id}/redeploy`)).statusCode).toBe(200);
    await h.container.db.deployment.update({
      where: { id: json<{ deploy_job_id: string }>(first).deploy_job_id },
      data: { status: 'succeeded' },
    });
    expectRefusal(await post(t.auth, `/api/services/${id}/redeploy`), {
      name: 'deploys_per_hour',
      limit: 2,
      usage: 2,
      requested: 1,
    });
    expectRefusal(await create(t), { name: 'deploys_per_hour', limit: 2, usage: 2, requested: 1 });
  });

  it('deploys_per_hour: a rollback counts too', async () => {
    const t = await tenant({ deploys_per_hour: 1 });
    const id = await settled(await create(t));
    // An older release to go back to (created long before this hour: not counted).
    await addDeployment(h, id, { at: 0 });
    expectRefusal(await post(t.auth, `/api/services/${id}/rollback`, {}), {
      name: 'deploys_per_hour',
      limit: 1,
      usage: 1,
      requested: 1,
    });
    const raised = await h.app.inject({
      method: 'PUT',
      url: `/api/customers/${t.customerId}/quota`,
      headers: { authorization: admin.auth },
      payload: { plan: 'default', overrides: { deploys_per_hour: 2 } },
    });
    expect(raised.statusCode).toBe(200);
    expect((await post(t.auth, `/api/services/${id}/rollback`, {})).statusCode).toBe(200);
  });
});

describe('lowering a quota below usage', () => {
  it('stops growth and leaves what runs alone', async () => {
    const t = await tenant({});
    const ids = [await settled(await create(t)), await settled(await create(t))];
    await h.container.db.service.updateMany({ where: { id: { in: ids } }, data: { status: 'running' } });
    const lowered = await h.app.inject({
      method: 'PUT',
      url: `/api/customers/${t.customerId}/quota`,
      headers: { authorization: admin.auth },
      payload: { plan: 'default', overrides: { services: 1, containers: 1 } },
    });
    expect(lowered.statusCode).toBe(200);
    expect(json<{ usage: { services: number } }>(lowered).usage.services).toBe(2);

    expectRefusal(await create(t), { name: 'services', limit: 1, usage: 2, requested: 1 });
    // Nothing that runs was touched, and a redeploy of the same definition still goes through.
    const rows = await h.container.db.service.findMany({ where: { id: { in: ids } } });
    expect(rows.map((row) => row.status)).toEqual(['running', 'running']);
    expect((await post(t.auth, `/api/services/${ids[0]}/redeploy`)).statusCode).toBe(200);
  });
});
