import { FINAL_DEPLOYMENT_STATUSES } from '@hostctl/domain';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isGood, requireCaddy, viaCaddy } from './caddy-traffic.js';
import { eventually } from './client.js';
import {
  createReleaseService,
  operatorApi,
  release,
  waitDeployment,
  type Api,
  type DeploymentView,
} from './release-fixtures.js';
import { startStack, type Stack } from './stack.js';

/**
 * Issue 29: release windows that end on evidence, through the real worker, engine and Caddy, with
 * the longest windows far beyond the test's patience (stabilisation 60 s, drain 120 s). A release
 * whose health check keeps passing takes traffic without waiting its window out, and a visitor's
 * request that was running on the previous release when the route switched is answered in full by
 * it: the previous release is retired only once Caddy has no request in flight to it.
 * Single engine only: under Swarm, Swarm's update monitor times the release (docs/swarm-runtime.md).
 */
let stack: Stack;
let api: Api;
let customerId: string;
let serviceId = '';
let host = '';

const stepOf = async (id: string) => (await api.get<DeploymentView>(`/api/deployments/${id}`)).body;
const logOf = async (id: string) =>
  (await api.get<{ logs: { message: string }[] }>(`/api/deployments/${id}`)).body.logs
    .map((line) => line.message)
    .join('\n');

beforeAll(async () => {
  requireCaddy();
  stack = await startStack({
    extraEnv: {
      RELEASE_STABILIZATION_MS: '60000',
      RELEASE_STABILIZATION_MIN_MS: '500',
      RELEASE_DRAIN_MS: '120000',
      RELEASE_DRAIN_MIN_MS: '500',
    },
  });
  ({ api, customerId } = await operatorApi(stack, 'drain'));
  const created = await createReleaseService(api, customerId, 'drain', { VERSION: '1' });
  ({ id: serviceId, host } = created);
  expect((await waitDeployment(api, created.deploymentId)).status).toBe('succeeded');
  await eventually(
    () => viaCaddy(host),
    (answer) => isGood(answer) && answer.body === 'release-1',
  );
});
afterAll(async () => {
  if (serviceId) await api.delete(`/api/services/${serviceId}`);
  await stack?.stop();
});

describe('release windows that end on evidence', () => {
  it('holds the drain while a request runs on the previous release, which answers it in full', async () => {
    const slow = viaCaddy(host, 90_000, '/cgi-bin/slow');
    const deploymentId = await release(api, serviceId, { VERSION: '2' });
    await eventually(
      () => stepOf(deploymentId),
      // A queued deployment is not running yet either: only the drain step or a final status ends
      // the wait, or the test would ask Caddy before the switch.
      (deployment) =>
        deployment.step === 'drain' ||
        (FINAL_DEPLOYMENT_STATUSES as readonly string[]).includes(deployment.status),
    );
    // Switched: new visitors get release 2, while the deployment waits for the slow request.
    const after = await viaCaddy(host);
    expect(after).toMatchObject({ status: 200, body: 'release-2' });
    expect(await stepOf(deploymentId)).toMatchObject({ status: 'running', step: 'drain' });

    expect(await slow).toMatchObject({ status: 200, body: 'release-1' });
    expect(await waitDeployment(api, deploymentId)).toMatchObject({ status: 'succeeded' });
    const log = await logOf(deploymentId);
    expect(log).toMatch(/The new release held after [\d.]+ s: every check passed/);
    expect(log).toMatch(/Drained after [\d.]+ s: every check passed/);
  });

  it('ends both windows on evidence when nothing is in flight', async () => {
    const deploymentId = await release(api, serviceId, { VERSION: '3' });
    expect(await waitDeployment(api, deploymentId)).toMatchObject({ status: 'succeeded' });
    expect(await viaCaddy(host)).toMatchObject({ status: 200, body: 'release-3' });
    const log = await logOf(deploymentId);
    expect(log).toMatch(/The new release held after [\d.]+ s: every check passed/);
    expect(log).toMatch(/Drained after [\d.]+ s: every check passed/);
    expect(log).not.toMatch(/longest window/);
  });
});
