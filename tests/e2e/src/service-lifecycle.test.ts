import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiClient } from '@hostctl/testing';
import { eventually } from './client.js';
import { TEST_IMAGE } from './env.js';
import { startStack, type Stack } from './stack.js';
import { fetchFrom, nothingLeftOf, runningUnitsOf, unitsOf } from './workloads.js';

/**
 * What a newcomer does on day one, through real processes: bootstrap with the CLI, create a compose
 * service, watch it reach running, hit its container, stop/start/restart/redeploy it, read its
 * events and logs, and delete it leaving nothing behind. Under E2E_RUNTIME=swarm the same steps,
 * with the service's Swarm tasks where the single engine has containers (workloads.ts).
 */
let stack: Stack;
let api: ReturnType<typeof apiClient>;
let customerId: string;

beforeAll(async () => {
  stack = await startStack();
  const customer = await stack.cli('customers', 'create', '--name', `e2e-${Date.now()}`);
  customerId = customer.id as string;
  const email = `ci-${Date.now()}@e2e.test`;
  await stack.cli(
    'users',
    'create',
    '--email',
    email,
    '--name',
    'CI',
    '--role',
    'operator',
    '--customer',
    customerId,
  );
  const key = await stack.cli('api-keys', 'create', '--email', email, '--name', 'pipeline');
  api = apiClient(stack.apiUrl, key.key as string);
});
afterAll(async () => stack?.stop());

const fetchFromUnit = async (serviceId: string) => fetchFrom((await unitsOf(serviceId))[0]);

describe('a compose service from create to delete', () => {
  let id: string;
  let name: string;

  it('is created, deployed and reachable', async () => {
    name = `hello-${Date.now().toString(36)}`;
    const created = await api.post<{ id: string; status: string; url: string; deploy_job_id: string }>(
      '/api/services',
      {
        name,
        customer_id: customerId,
        deploy_method: 'compose',
        compose: `services:\n  web:\n    image: ${TEST_IMAGE}\n    ports: ["8080"]\n`,
      },
    );
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ status: 'deploying', url: `http://${name}.apps.localhost` });
    id = created.body.id;

    const deployment = await api.get<{ status: string; logs: unknown[] }>(
      `/api/deployments/${created.body.deploy_job_id}?wait=90`,
    );
    expect(deployment.body.status).toBe('succeeded');
    expect(deployment.body.logs.length).toBeGreaterThan(0);

    const detail = await api.get(`/api/services/${id}`);
    expect(detail.body).toMatchObject({ status: 'running', deploy_method: 'compose' });
    expect(detail.body.deployed_at).toEqual(expect.any(String));
    expect(await fetchFromUnit(id)).toContain('hello from busybox');
  });

  it('stops, starts and restarts with the spec messages', async () => {
    const stopped = await api.post(`/api/services/${id}/stop`);
    expect(stopped).toMatchObject({
      status: 200,
      body: { id, status: 'stopped', message: 'Service stopped' },
    });
    expect(await runningUnitsOf(id)).toEqual([]);

    const again = await api.post(`/api/services/${id}/stop`);
    expect(again.body).toMatchObject({ status: 'stopped', message: 'Service is already stopped' });

    const started = await api.post(`/api/services/${id}/start`);
    expect(started).toMatchObject({
      status: 200,
      body: { id, status: 'running', message: 'Service started' },
    });
    expect(await fetchFromUnit(id)).toContain('hello from busybox');

    const restarted = await api.post(`/api/services/${id}/restart`);
    expect(restarted).toMatchObject({
      status: 200,
      body: { id, status: 'running', message: 'Service restarted' },
    });
  });

  it('redeploys to a fresh container set, never two at once', async () => {
    const before = (await unitsOf(id)).map((unit) => unit.id);
    const redeploy = await api.post<{ id: string; status: string; deploy_job_id: string }>(
      `/api/services/${id}/redeploy`,
    );
    expect(redeploy.status).toBe(200);
    expect(redeploy.body).toMatchObject({ id, status: 'deploying' });
    const outcome = await api.get(`/api/deployments/${redeploy.body.deploy_job_id}?wait=90`);
    expect(outcome.body.status).toBe('succeeded');
    const after = await unitsOf(id);
    expect(after).toHaveLength(1);
    expect(before).not.toContain(after[0]?.id);
    // Under Swarm the replaced task can still be stopping (within its stop grace period) when Swarm
    // calls the update done: wait for it, then exactly the new unit runs.
    await eventually(
      () => runningUnitsOf(id),
      (running) => running.length === 1 && running[0]?.id === after[0]?.id,
    );
    expect((await api.get(`/api/services/${id}`)).body.status).toBe('running');
  });

  it('keeps a timeline of what happened, newest first', async () => {
    const events = await api.get<{
      data: { type: string; status: string; message: string; timestamp: string }[];
    }>(`/api/services/${id}/events?per_page=100`);
    const seen = events.body.data.map((e) => `${e.type}:${e.status}`);
    for (const expected of [
      'deploy:started',
      'deploy:success',
      'stop:success',
      'start:success',
      'restart:success',
      'redeploy:success',
    ]) {
      expect(seen).toContain(expected);
    }
    const times = events.body.data.map((e) => Date.parse(e.timestamp));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
  });

  it('is deleted completely: 404 at once, then no container, network or volume left', async () => {
    const removed = await api.delete(`/api/services/${id}`);
    expect(removed.status).toBe(204);
    expect((await api.get(`/api/services/${id}`)).status).toBe(404);
    // Under Swarm also no Swarm service or task.
    await nothingLeftOf(id);
  });
});

describe('a deploy that cannot succeed', () => {
  it('ends failed with a reason a person can act on', async () => {
    const created = await api.post<{ id: string; deploy_job_id: string }>('/api/services', {
      name: `broken-${Date.now().toString(36)}`,
      customer_id: customerId,
      deploy_method: 'compose',
      compose: 'services:\n  web:\n    image: local/does-not-exist:1\n',
    });
    expect(created.status).toBe(201);
    const deployment = await api.get<{ status: string; error: string }>(
      `/api/deployments/${created.body.deploy_job_id}?wait=90`,
    );
    expect(deployment.body.status).toBe('failed');
    expect(deployment.body.error).toMatch(/local\/does-not-exist:1/);
    expect((await api.get(`/api/services/${created.body.id}`)).body.status).toBe('failed');
    const events = await api.get<{ data: { type: string; status: string; message: string }[] }>(
      `/api/services/${created.body.id}/events`,
    );
    expect(events.body.data[0]).toMatchObject({
      type: 'deploy',
      status: 'failed',
      message: expect.stringMatching(/does-not-exist/),
    });
    expect((await api.delete(`/api/services/${created.body.id}`)).status).toBe(204);
  });
});
