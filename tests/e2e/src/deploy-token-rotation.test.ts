import { apiClient } from '@hostctl/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireCaddy, viaCaddy } from './caddy-traffic.js';
import { eventually } from './client.js';
import {
  createReleaseService,
  operatorApi,
  release,
  settledStatus,
  waitDeployment,
  type Api,
  type DeploymentView,
} from './release-fixtures.js';
import { startStack, type Stack } from './stack.js';

// Issue 27, class 3, as it was seen: a deploy token (403 on PATCH) rolled back to a release whose
// variables held a leaked secret, then cancelled the owner's next rotation, and the service reported
// the rotated value while its container ran the leaked one. VERSION stands for the secret: the
// page through Caddy says which value the running container has.
let stack: Stack;
let owner: Api;
let token: Api;
let serviceId = '';
let host = '';
const deployments: Record<string, string> = {};

const variablesOf = async (api: Api) =>
  (await api.get<{ variables: Record<string, string> }>(`/api/services/${serviceId}`)).body.variables;

beforeAll(async () => {
  requireCaddy();
  stack = await startStack();
  const operator = await operatorApi(stack, 'rotation');
  owner = operator.api;
  const created = await createReleaseService(owner, operator.customerId, 'rot', { VERSION: 'leaked-v1' });
  ({ id: serviceId, host } = created);
  deployments.v1 = created.deploymentId;
  expect((await waitDeployment(owner, deployments.v1)).status).toBe('succeeded');
  deployments.v2 = await release(owner, serviceId, { VERSION: 'rotated-v2' });
  expect((await waitDeployment(owner, deployments.v2)).status).toBe('succeeded');
  // The CI pipeline's token: minted by the operator CLI, limited to this service and to deploying.
  const minted = await stack.cli(
    'api-keys',
    'create',
    '--email',
    operator.email,
    '--name',
    'ci',
    '--service',
    serviceId,
    '--actions',
    'read,deploy',
  );
  token = apiClient(stack.apiUrl, minted.key as string);
}, 300_000);
afterAll(async () => {
  if (serviceId) await owner?.delete(`/api/services/${serviceId}`);
  await stack?.stop();
});

describe('a deploy token cannot undo a secret rotation', () => {
  it('may not roll back to a release that ran other variables', async () => {
    expect((await viaCaddy(host)).body).toBe('release-rotated-v2');
    const refused = await token.post<{ detail: string }>(`/api/services/${serviceId}/rollback`, {
      deployment_id: deployments.v1,
    });
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toMatch(/variables/);
    expect(refused.body.detail).not.toContain('leaked-v1');
    // Nothing was queued: the rotated release still serves.
    expect((await viaCaddy(host)).body).toBe('release-rotated-v2');
  });

  it("may not cancel the owner's rotation; once the owner cancels it, the service reports what runs", async () => {
    // A rotation that waits in its health check, so there is time to try to cancel it.
    const rotation = await release(owner, serviceId, {
      VERSION: 'rotated-v3',
      READY_AFTER: '600',
      HEALTH_GRACE: '600s',
    });
    await eventually(
      async () => (await owner.get<DeploymentView>(`/api/deployments/${rotation}`)).body.status,
      (status) => status === 'running',
      90_000,
    );
    const refused = await token.post(`/api/deployments/${rotation}/cancel`);
    expect(refused.status).toBe(403);

    expect((await owner.post(`/api/deployments/${rotation}/cancel`)).status).toBe(200);
    expect((await waitDeployment(owner, rotation)).status).toBe('cancelled');
    expect(await settledStatus(owner, serviceId)).toBe('running');
    // The API's variables are those of the release the container runs, not of the cancelled one.
    expect((await viaCaddy(host)).body).toBe('release-rotated-v2');
    expect((await variablesOf(owner)).VERSION).toBe('rotated-v2');
  }, 300_000);
});
