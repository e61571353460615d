import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildFixtures, type Caller, type Fixtures } from '../../authz/authz-fixtures.js';
import { COMPOSE_BUSYBOX, createHarness, json, type Harness } from '../../test-support/harness.js';
import { addDeployment, settleFirst } from '../../test-support/releases.js';

/**
 * Issue 27, class 3: a deploy token (read + deploy) rolled back to a release whose variables held
 * a leaked password, then cancelled its owner's re-rotation, and the service reported the rotated
 * value while its containers ran the leaked one. A change of variables or compose is `manage`'s,
 * whichever route carries it, and the service reports the variables of the release that runs.
 * No worker runs here: releases are deployment rows as the worker leaves them (test-support/releases).
 */
let h: Harness;
let f: Fixtures;
let owner: Caller;
let ownerSession: Record<string, string>;

beforeAll(async () => {
  h = await createHarness();
  f = await buildFixtures(h);
  owner = f.callers.find((c) => c.role === 'operator' && c.scope === 'own')!;
  ownerSession = await f.session(owner);
});
afterAll(async () => h?.close());

const LEAKED = { DB_PASSWORD: 'leaked-v1' };
const ROTATED = { DB_PASSWORD: 'rotated-v2' };

/** A running service whose first release ran LEAKED and whose current release runs ROTATED. */
async function rotatedService() {
  const { id, deploy_job_id } = await h.createService(owner.auth, {
    customer_id: f.customerA,
    variables: LEAKED,
  });
  await settleFirst(h, id, deploy_job_id, { at: 0, compose: COMPOSE_BUSYBOX, variables: LEAKED });
  const rotated = await addDeployment(h, id, { at: 60, compose: COMPOSE_BUSYBOX, variables: ROTATED });
  await h.container.db.service.update({ where: { id }, data: { variables: ROTATED, status: 'running' } });
  return { serviceId: id, leaked: deploy_job_id, rotated };
}

async function deployToken(serviceId: string, actions: string[] = ['read', 'deploy']): Promise<string> {
  const response = await h.app.inject({
    method: 'POST',
    url: '/api/auth/api-keys',
    headers: ownerSession,
    payload: { name: 'ci', service_id: serviceId, actions },
  });
  expect(response.statusCode).toBe(201);
  return `Bearer ${json<{ key: string }>(response).key}`;
}

const post = (auth: string, url: string, payload?: object) =>
  h.app.inject({ method: 'POST', url, headers: { authorization: auth }, ...(payload ? { payload } : {}) });
const variablesOf = async (serviceId: string) =>
  json<{ variables: Record<string, string> }>(
    await h.app.inject({
      method: 'GET',
      url: `/api/services/${serviceId}`,
      headers: { authorization: owner.auth },
    }),
  ).variables;
const rollbacksOf = (serviceId: string) =>
  h.container.db.deployment.count({ where: { serviceId, trigger: 'rollback' } });

describe('rollback by a key without manage', () => {
  it('is refused when the release ran other variables; the problem names them, never their values', async () => {
    const { serviceId, leaked } = await rotatedService();
    const token = await deployToken(serviceId);
    const refused = await post(token, `/api/services/${serviceId}/rollback`, { deployment_id: leaked });
    expect(refused.statusCode).toBe(403);
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    const problem = json<{ code: string; detail: string }>(refused);
    expect(problem.code).toBe('forbidden');
    expect(problem.detail).toContain('variables DB_PASSWORD');
    expect(problem.detail).toContain('manage');
    expect(refused.body).not.toContain('leaked-v1');
    // The default target (the previous release) is the same release: refused too.
    expect((await post(token, `/api/services/${serviceId}/rollback`)).statusCode).toBe(403);
    expect(await rollbacksOf(serviceId)).toBe(0);
    expect(await variablesOf(serviceId)).toEqual(ROTATED);
  });

  it('is accepted when the release ran the current variables (an images-only rollback)', async () => {
    const { serviceId, rotated } = await rotatedService();
    await addDeployment(h, serviceId, { at: 120, compose: COMPOSE_BUSYBOX, variables: ROTATED });
    const token = await deployToken(serviceId);
    const accepted = await post(token, `/api/services/${serviceId}/rollback`, { deployment_id: rotated });
    expect(accepted.statusCode).toBe(200);
    expect(await rollbacksOf(serviceId)).toBe(1);
  });

  it('is refused when the release ran another compose document, with the same variables', async () => {
    const { serviceId } = await rotatedService();
    const otherCompose = COMPOSE_BUSYBOX.replace('busybox', 'busybox-old');
    expect(otherCompose).not.toBe(COMPOSE_BUSYBOX);
    const older = await addDeployment(h, serviceId, { at: 30, compose: otherCompose, variables: ROTATED });
    const token = await deployToken(serviceId);
    const refused = await post(token, `/api/services/${serviceId}/rollback`, { deployment_id: older });
    expect(refused.statusCode).toBe(403);
    const problem = json<{ detail: string }>(refused);
    expect(problem.detail).toContain('compose document');
    expect(problem.detail).not.toContain('DB_PASSWORD');
    expect(await rollbacksOf(serviceId)).toBe(0);
  });

  it('a key with manage, and the owner, may bring the old variables back', async () => {
    const { serviceId, leaked } = await rotatedService();
    const manager = await deployToken(serviceId, ['read', 'deploy', 'manage']);
    expect(
      (await post(manager, `/api/services/${serviceId}/rollback`, { deployment_id: leaked })).statusCode,
    ).toBe(200);
    expect(
      (await post(owner.auth, `/api/services/${serviceId}/rollback`, { deployment_id: leaked })).statusCode,
    ).toBe(200);
  });
});

describe('cancel by a key without manage', () => {
  const rotate = async (serviceId: string, password: string) => {
    const response = await h.app.inject({
      method: 'PATCH',
      url: `/api/services/${serviceId}`,
      headers: { authorization: owner.auth },
      payload: { variables: { DB_PASSWORD: password } },
    });
    expect(response.statusCode).toBe(200);
    return json<{ deploy_job_id: string }>(response).deploy_job_id;
  };
  const statusOf = async (id: string) =>
    (await h.container.db.deployment.findUniqueOrThrow({ where: { id } })).status;

  it("is refused for the owner's re-rotation; the deployment stays queued", async () => {
    const { serviceId } = await rotatedService();
    const token = await deployToken(serviceId);
    const deploymentId = await rotate(serviceId, 'rotated-v3');
    const refused = await post(token, `/api/deployments/${deploymentId}/cancel`);
    expect(refused.statusCode).toBe(403);
    expect(json<{ detail: string }>(refused).detail).toContain('variables DB_PASSWORD');
    expect(refused.body).not.toContain('rotated-v3');
    expect(await statusOf(deploymentId)).toBe('queued');
  });

  it('is accepted for a redeploy that changes nothing', async () => {
    const { serviceId } = await rotatedService();
    const token = await deployToken(serviceId);
    const redeploy = await post(token, `/api/services/${serviceId}/redeploy`);
    const deploymentId = json<{ deploy_job_id: string }>(redeploy).deploy_job_id;
    expect((await post(token, `/api/deployments/${deploymentId}/cancel`)).statusCode).toBe(200);
    expect(await variablesOf(serviceId)).toEqual(ROTATED);
  });
});

describe('what the service reports is what its release runs', () => {
  it('a cancelled change of variables leaves the service with the running release’s variables', async () => {
    const { serviceId } = await rotatedService();
    const deploymentId = json<{ deploy_job_id: string }>(
      await h.app.inject({
        method: 'PATCH',
        url: `/api/services/${serviceId}`,
        headers: { authorization: owner.auth },
        payload: { variables: { DB_PASSWORD: 'rotated-v3' } },
      }),
    ).deploy_job_id;
    expect(await variablesOf(serviceId)).toEqual({ DB_PASSWORD: 'rotated-v3' });
    expect((await post(owner.auth, `/api/deployments/${deploymentId}/cancel`)).statusCode).toBe(200);
    expect(await variablesOf(serviceId)).toEqual(ROTATED);
  });
});
