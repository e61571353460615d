import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, json, uniqueName, type Harness } from '../../test-support/harness.js';

// API-side behaviour that needs no worker: durable creation, coalescing redeploys, conflicts, delete.
let h: Harness;
let operator: { auth: string };
let customerId: string;

beforeAll(async () => {
  h = await createHarness();
  operator = await h.user('operator');
  customerId = (await h.customer()).id;
});
afterAll(async () => h.close());

const create = (name = uniqueName('flow')) =>
  h.createService(operator.auth, { name, customer_id: customerId });

const get = (url: string) => h.app.inject({ url, headers: { authorization: operator.auth } });
const post = (url: string) =>
  h.app.inject({ method: 'POST', url, headers: { authorization: operator.auth } });

describe('create', () => {
  it('answers 201 deploying with a URL and a deployment committed before the job is queued', async () => {
    const created = await create();
    expect(created).toMatchObject({ status: 'deploying', url: `http://${created.name}.apps.localhost` });
    const deployment = await h.container.db.deployment.findUnique({ where: { id: created.deploy_job_id } });
    expect(deployment).toMatchObject({ serviceId: created.id, status: 'queued', trigger: 'create' });
    const job = await h.container.producer.queue('deployments').getJob(`deploy.${created.deploy_job_id}`);
    expect(job?.data).toEqual({ deploymentId: created.deploy_job_id });
  });

  it('shows the full detail shape', async () => {
    const created = await create();
    const detail = json(await get(`/api/services/${created.id}`));
    expect(detail).toMatchObject({
      id: created.id,
      name: created.name,
      status: 'deploying',
      deploy_method: 'compose',
      customer_id: customerId,
      customer_name: expect.any(String),
      compose: expect.any(String),
      variables: {},
      custom_domains: [],
      health: { status: expect.any(String), consecutive_failures: 0 },
      resources: { cpu_usage: 0, memory_usage_mb: 0, memory_limit_mb: 0, cpu_limit: 0, storage_mb: 0 },
    });
    expect(Date.parse(detail.created_at as string)).not.toBeNaN();
  });

  it('records a deploy started event', async () => {
    const created = await create();
    const events = json<{ data: { type: string; status: string }[] }>(
      await get(`/api/services/${created.id}/events`),
    );
    expect(events.data[0]).toMatchObject({ type: 'deploy', status: 'started' });
  });
});

describe('lifecycle while deploying', () => {
  it.each(['start', 'stop', 'restart'])('%s → 409 deployment_in_progress', async (action) => {
    const created = await create();
    const response = await post(`/api/services/${created.id}/${action}`);
    expect(response.statusCode).toBe(409);
    expect(json(response).code).toBe('deployment_in_progress');
  });
});

describe('redeploy', () => {
  it('coalesces into the deployment still waiting in the queue', async () => {
    const created = await create();
    const first = json<{ deploy_job_id: string; status: string }>(
      await post(`/api/services/${created.id}/redeploy`),
    );
    const second = json<{ deploy_job_id: string }>(await post(`/api/services/${created.id}/redeploy`));
    expect(first).toMatchObject({ id: created.id, status: 'deploying' });
    expect(first.deploy_job_id).toBe(created.deploy_job_id);
    expect(second.deploy_job_id).toBe(first.deploy_job_id);
  });

  it('queues a new deployment once the previous one has started', async () => {
    const created = await create();
    await h.container.db.deployment.update({
      where: { id: created.deploy_job_id },
      data: { status: 'running' },
    });
    const redeploy = json<{ deploy_job_id: string }>(await post(`/api/services/${created.id}/redeploy`));
    expect(redeploy.deploy_job_id).not.toBe(created.deploy_job_id);
  });
});

describe('list', () => {
  it('filters, searches case-insensitively and sorts', async () => {
    const tag = uniqueName('srt');
    const names = [`${tag}-b`, `${tag}-a`, `${tag}-c`];
    for (const name of names) await create(name);
    const byName = json<{ data: { name: string }[]; total: number }>(
      await get(`/api/services?search=${tag.toUpperCase()}&sort=name&order=asc`),
    );
    expect(byName.total).toBe(3);
    expect(byName.data.map((s) => s.name)).toEqual([...names].sort());
    const newestFirst = json<{ data: { name: string }[] }>(await get(`/api/services?search=${tag}`));
    expect(newestFirst.data.map((s) => s.name)).toEqual([...names].reverse());
    const paged = json<{ data: unknown[]; total: number; per_page: number; page: number }>(
      await get(`/api/services?search=${tag}&per_page=2&page=2`),
    );
    expect(paged).toMatchObject({ total: 3, per_page: 2, page: 2 });
    expect(paged.data).toHaveLength(1);
    const deploying = json<{ total: number }>(await get(`/api/services?search=${tag}&status=deploying`));
    expect(deploying.total).toBe(3);
    const running = json<{ total: number }>(await get(`/api/services?search=${tag}&status=running`));
    expect(running.total).toBe(0);
  });
});

describe('delete', () => {
  it('answers 204, hides the service at once and frees its name', async () => {
    const created = await create();
    const response = await h.app.inject({
      method: 'DELETE',
      url: `/api/services/${created.id}`,
      headers: { authorization: operator.auth },
    });
    expect(response.statusCode).toBe(204);
    expect(response.body).toBe('');
    expect((await get(`/api/services/${created.id}`)).statusCode).toBe(404);
    expect(
      (
        await h.app.inject({
          method: 'DELETE',
          url: `/api/services/${created.id}`,
          headers: { authorization: operator.auth },
        })
      ).statusCode,
    ).toBe(404);
    const job = await h.container.producer.queue('deployments').getJob(`delete.${created.id}`);
    expect(job?.data).toEqual({ serviceId: created.id });
    const cancelled = await h.container.db.deployment.findUnique({ where: { id: created.deploy_job_id } });
    expect(cancelled?.status).toBe('cancelled');
    await create(created.name);
  });
});
