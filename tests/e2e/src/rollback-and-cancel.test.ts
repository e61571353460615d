import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isGood, requireCaddy, startTraffic, tally, viaCaddy } from './caddy-traffic.js';
import { eventually } from './client.js';
import { E2E_RUNTIME } from './env.js';
import {
  createReleaseService,
  operatorApi,
  release,
  releaseVariables,
  settledStatus,
  soleSet,
  waitDeployment,
  type Api,
  type DeploymentView,
} from './release-fixtures.js';
import { startStack, type Stack } from './stack.js';
import { unitsOf } from './workloads.js';

/**
 * Issue 14, second "done when" and the two new operations, through real processes and Caddy:
 * a release that crash-loops after the cutover is rolled back automatically while the old set is
 * still draining; POST /api/services/:id/rollback brings back what an earlier release ran (image,
 * compose, variables); POST /api/deployments/:id/cancel stops a release stuck in its health check
 * while the previous one keeps serving.
 *
 * Windows: stabilisation 1.5 s, drain 12 s. The crashing release exits 9 s after its start, i.e.
 * after verify (~1 s) and stabilisation, a few seconds into the drain: the moment the old set is
 * the only thing that can save the visitors.
 *
 * Under E2E_RUNTIME=swarm, with the same windows, Swarm replaces the task (start-first) and
 * watches it for its update monitor, RELEASE_STABILIZATION_MS + RELEASE_DRAIN_MS, 13.5 s; the
 * worker routes the new task once it has run for the stabilisation window. The release exits 9 s
 * after its start, once it has taken traffic and within the monitor: Swarm rolls the update back
 * itself, and once the previous release runs again the worker reports the deployment rolled_back,
 * as the single engine does, with the task's error (apps/worker/src/adapters/swarm-tasks.ts).
 */
let stack: Stack;
let api: Api;
let customerId: string;
let serviceId: string;
let host: string;
const deployments: Record<string, string> = {};

type Event = { type: string; status: string; message: string };
const eventsOf = async (id: string) =>
  (await api.get<{ data: Event[] }>(`/api/services/${id}/events?per_page=100`)).body.data;

// Each test waits for one or two cutovers with a 12 s drain (Swarm: monitor); a loaded machine
// makes each slower.
const CUTOVER_TIMEOUT_MS = 300_000;

const isSwarm = E2E_RUNTIME === 'swarm';
// A fixed drain (its shortest is its longest): the crash must land inside it, whatever the traffic.
const WINDOWS: Record<string, string> = {
  RELEASE_STABILIZATION_MS: '1500',
  RELEASE_DRAIN_MS: '12000',
  RELEASE_DRAIN_MIN_MS: '12000',
};
/** How the crash-looping release ends (above): status, and what its error names under Swarm. */
const CRASHED = {
  status: 'rolled_back',
  error: isSwarm ? /non-zero exit \(3\).*Swarm rolled back to the previous release/ : /./,
};

/**
 * The release is waiting for its health check: the single engine's verify step; under Swarm the
 * stabilize step (up() waits for Swarm's verdict) with the new release's task started, not healthy.
 */
async function isWaitingForHealthCheck(serviceId: string, deploymentId: string): Promise<boolean> {
  const { step } = (await api.get<DeploymentView>(`/api/deployments/${deploymentId}`)).body;
  if (!isSwarm) return step === 'verify';
  const units = await unitsOf(serviceId);
  return (
    step === 'stabilize' &&
    units.some((unit) => unit.deploymentId === deploymentId && unit.state === 'starting')
  );
}

beforeAll(async () => {
  requireCaddy();
  stack = await startStack({
    extraEnv: { ...WINDOWS, HEALTH_INTERVAL_MS: '2000' },
  });
  ({ api, customerId } = await operatorApi(stack, 'rollback'));
  const created = await createReleaseService(api, customerId, 'rb', { VERSION: '1' });
  ({ id: serviceId, host } = created);
  deployments.v1 = created.deploymentId;
  expect((await waitDeployment(api, deployments.v1)).status).toBe('succeeded');
  deployments.v2 = await release(api, serviceId, { VERSION: '2' });
  expect((await waitDeployment(api, deployments.v2)).status).toBe('succeeded');
  expect((await viaCaddy(host)).body).toBe('release-2');
}, CUTOVER_TIMEOUT_MS);
afterAll(async () => {
  if (serviceId) await api.delete(`/api/services/${serviceId}`);
  await stack?.stop();
});

describe('automatic rollback', () => {
  it(
    'rolls back a release that crash-loops after the cutover, and reports it',
    async () => {
      const traffic = startTraffic(host);
      try {
        deployments.v3 = await release(api, serviceId, { VERSION: '3', CRASH_AFTER: '9' });
        const outcome = await waitDeployment(api, deployments.v3);
        expect(outcome.status).toBe(CRASHED.status);
        expect(outcome.error).toEqual(expect.stringMatching(CRASHED.error));
      } finally {
        await traffic.stop();
      }
      const seen = tally(traffic.answers);
      // Information, not a promise: between the crash and the route back, requests can fail.
      console.log(
        `[rollback] crash-looping release: ${seen.total} requests, by release ${JSON.stringify(seen.bodies)}, ${seen.bad.length} not 2xx`,
      );
      // It did receive traffic: the crash came after the cutover, not before.
      expect(seen.bodies['release-3']).toBeGreaterThan(0);
      expect((await viaCaddy(host)).body).toBe('release-2');
      expect(await settledStatus(api, serviceId)).toBe('running');
      expect(await soleSet(serviceId)).toBe(deployments.v2);
      expect(await eventsOf(serviceId)).toContainEqual(
        expect.objectContaining({ type: 'redeploy', status: CRASHED.status }),
      );
    },
    CUTOVER_TIMEOUT_MS,
  );
});

describe('deployment history and rollback', () => {
  it(
    'lists the deployments newest first, paginated, without variables',
    async () => {
      const history = await api.get<{
        data: DeploymentView[];
        total: number;
        page: number;
        per_page: number;
      }>(`/api/services/${serviceId}/deployments`);
      expect(history.status).toBe(200);
      expect(history.body.total).toBe(3);
      expect(history.body.data.map((d) => [d.id, d.status, d.trigger])).toEqual([
        [deployments.v3, CRASHED.status, 'redeploy'],
        [deployments.v2, 'succeeded', 'redeploy'],
        [deployments.v1, 'succeeded', 'create'],
      ]);
      for (const item of history.body.data) expect(item).not.toHaveProperty('variables');
      const second = await api.get<{ data: DeploymentView[]; page: number }>(
        `/api/services/${serviceId}/deployments?page=2&per_page=1`,
      );
      expect(second.body.data.map((d) => d.id)).toEqual([deployments.v2]);
    },
    CUTOVER_TIMEOUT_MS,
  );

  it(
    'rolls back to the release before the current one: its page, its variables, no failed request',
    async () => {
      const [before] = (
        await api.get<{ data: DeploymentView[] }>(`/api/services/${serviceId}/deployments?per_page=3`)
      ).body.data.filter((d) => d.id === deployments.v1);
      const traffic = startTraffic(host);
      let rollbackId = '';
      try {
        const accepted = await api.post<{ id: string; status: string; deploy_job_id: string }>(
          `/api/services/${serviceId}/rollback`,
        );
        expect(accepted.status).toBe(200);
        expect(accepted.body).toMatchObject({ id: serviceId, status: 'deploying' });
        rollbackId = accepted.body.deploy_job_id;
        const outcome = await waitDeployment(api, rollbackId);
        expect(outcome).toMatchObject({
          status: 'succeeded',
          trigger: 'rollback',
          rollback_of: deployments.v1,
        });
        // Exactly what v1 ran: the same pinned images.
        expect(outcome.image_digests).toEqual(before?.image_digests);
      } finally {
        await traffic.stop();
      }
      const seen = tally(traffic.answers);
      expect(seen.bad).toEqual([]);
      // One release or the other answered, never the crashing one (it is not the current release).
      for (const body of Object.keys(seen.bodies)) expect(['release-1', 'release-2']).toContain(body);
      expect((await viaCaddy(host)).body).toBe('release-1');
      const detail = await api.get<{ status: string; variables: Record<string, string> }>(
        `/api/services/${serviceId}`,
      );
      expect(detail.body.status).toBe('running');
      // The crashing release's variables are gone: the next redeploy will not bring the crash back.
      expect(detail.body.variables).toEqual(releaseVariables({ VERSION: '1' }));
      expect(await soleSet(serviceId)).toBe(rollbackId);
      expect(await eventsOf(serviceId)).toContainEqual(
        expect.objectContaining({ type: 'rollback', status: 'success' }),
      );
    },
    CUTOVER_TIMEOUT_MS,
  );

  it(
    'refuses a target that is not a good release of this service',
    async () => {
      const notGood = await api.post(`/api/services/${serviceId}/rollback`, {
        deployment_id: deployments.v3,
      });
      expect(notGood.status).toBe(409);
      const other = await createReleaseService(api, customerId, 'rb-other', { VERSION: 'other' });
      expect((await waitDeployment(api, other.deploymentId)).status).toBe('succeeded');
      const foreign = await api.post(`/api/services/${other.id}/rollback`, {
        deployment_id: deployments.v1,
      });
      expect(foreign.status).toBe(404);
      expect((await api.delete(`/api/services/${other.id}`)).status).toBe(204);
    },
    CUTOVER_TIMEOUT_MS,
  );
});

describe('cancel', () => {
  it(
    'cancels a release waiting for its health check; the previous release keeps serving',
    async () => {
      const serving = await soleSet(serviceId);
      const page = (await viaCaddy(host)).body;
      const traffic = startTraffic(host);
      let deploymentId = '';
      try {
        deploymentId = await release(api, serviceId, {
          VERSION: '4',
          READY_AFTER: '600',
          HEALTH_GRACE: '600s',
        });
        await eventually(
          () => isWaitingForHealthCheck(serviceId, deploymentId),
          (isWaiting) => isWaiting,
          90_000,
        );
        const cancelled = await api.post<DeploymentView>(`/api/deployments/${deploymentId}/cancel`);
        expect(cancelled.status).toBe(200);
        expect(cancelled.body).toMatchObject({ id: deploymentId, status: 'cancelled' });
        expect((await waitDeployment(api, deploymentId)).status).toBe('cancelled');
        const settled = await settledStatus(api, serviceId);
        const told = (await eventsOf(serviceId)).slice(0, 8).map((event) => event.message);
        expect(settled, told.join('\n')).toBe('running');
        // What the cancelled release had started is removed; the serving set is untouched.
        expect(await soleSet(serviceId)).toBe(serving);
      } finally {
        await traffic.stop();
      }
      const seen = tally(traffic.answers);
      expect(seen.bad).toEqual([]);
      expect(Object.keys(seen.bodies)).toEqual([page]);
      expect(traffic.answers.filter(isGood).length).toBeGreaterThan(0);
      expect((await api.post(`/api/deployments/${deploymentId}/cancel`)).status).toBe(409);
      expect(await eventsOf(serviceId)).toContainEqual(
        expect.objectContaining({ type: 'redeploy', status: 'cancelled' }),
      );
    },
    CUTOVER_TIMEOUT_MS,
  );
});
