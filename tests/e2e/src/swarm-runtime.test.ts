import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APPS_DOMAIN, requireCaddy, startTraffic, tally, viaCaddy } from './caddy-traffic.js';
import { eventually } from './client.js';
import { TEST_IMAGE, runtimeEnv } from './env.js';
import { operatorApi, type Api } from './release-fixtures.js';
import { startStack, type Stack } from './stack.js';
import { nothingLeftOf, runningUnitsOf, swarmServicesOf } from './workloads.js';

/**
 * The API and a worker started with RUNTIME=swarm (issue 17), driven through the API as a CI
 * pipeline does: the service runs as Swarm services on the dev stack's swarm engine
 * (scripts/lib/swarm-engine.sh), answers through Caddy, survives a redeploy without a failed
 * request, stops and starts, and leaves nothing on the swarm when deleted. The platform image
 * exists only on the dev engine: the worker pushes it to the registry for the nodes.
 */
const swarmEnv = runtimeEnv('swarm');
let stack: Stack;
let api: Api;
let customerId: string;

beforeAll(async () => {
  requireCaddy();
  stack = await startStack({ extraEnv: swarmEnv });
  ({ api, customerId } = await operatorApi(stack, 'swarm'));
});
afterAll(async () => stack?.stop());

const runningTasksOf = (id: string) => runningUnitsOf(id, 'swarm');

describe('RUNTIME=swarm through the API', () => {
  let id: string;
  let host: string;

  it('creates a service that runs as Swarm tasks and answers at its public name', async () => {
    const name = `swarm-${Date.now().toString(36)}`;
    host = `${name}.${APPS_DOMAIN}`;
    const created = await api.post<{ id: string; deploy_job_id: string }>('/api/services', {
      name,
      customer_id: customerId,
      deploy_method: 'compose',
      compose: `services:\n  web:\n    image: ${TEST_IMAGE}\n    ports: ["8080"]\n    deploy: {replicas: 2}\n`,
    });
    expect(created.status).toBe(201);
    id = created.body.id;
    const deployment = await api.get<{ status: string; warnings: string[]; error: string | null }>(
      `/api/deployments/${created.body.deploy_job_id}?wait=120`,
    );
    expect(deployment.body, JSON.stringify(deployment.body)).toMatchObject({
      status: 'succeeded',
      // Swarm honours the replicas, and the compose default restart policy (no warning for it).
      warnings: [],
    });
    expect((await api.get(`/api/services/${id}`)).body).toMatchObject({ status: 'running' });
    expect(await swarmServicesOf(id)).toHaveLength(1);
    expect(await runningTasksOf(id)).toHaveLength(2);
    expect(await viaCaddy(host)).toMatchObject({ status: 200, body: 'hello from busybox' });
  });

  it('redeploys with no failed request', async () => {
    const traffic = startTraffic(host);
    try {
      const redeploy = await api.post<{ deploy_job_id: string }>(`/api/services/${id}/redeploy`);
      expect(redeploy.status).toBe(200);
      const outcome = await api.get<{ status: string }>(
        `/api/deployments/${redeploy.body.deploy_job_id}?wait=120`,
      );
      expect(outcome.body.status).toBe('succeeded');
    } finally {
      await traffic.stop();
    }
    const seen = tally(traffic.answers);
    expect(seen.bad).toEqual([]);
    expect(seen.total).toBeGreaterThan(10);
  });

  it('stops and starts', async () => {
    expect((await api.post(`/api/services/${id}/stop`)).body).toMatchObject({ status: 'stopped' });
    // The web component's tasks are gone when stop answers; the last release's standby, removed
    // when that release ended, may still be in its stop grace period (as an old task Swarm stops).
    await eventually(
      () => runningTasksOf(id),
      (tasks) => tasks.length === 0,
      15_000,
    );
    expect((await api.post(`/api/services/${id}/start`)).body).toMatchObject({ status: 'running' });
    expect(await runningTasksOf(id)).toHaveLength(2);
    expect(await viaCaddy(host)).toMatchObject({ status: 200, body: 'hello from busybox' });
  });

  it('is deleted: nothing of it left on the swarm, and its name answers 404', async () => {
    expect((await api.delete(`/api/services/${id}`)).status).toBe(204);
    await nothingLeftOf(id, 'swarm');
    await eventually(
      () => viaCaddy(host),
      (answer) => answer.status === 404,
    );
  });
});
