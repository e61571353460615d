import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildFixtures, type Caller, type Fixtures } from '../../authz/authz-fixtures.js';
import { COMPOSE_BUSYBOX, createHarness, json, type Harness } from '../../test-support/harness.js';
import { addDeployment, settleFirst } from '../../test-support/releases.js';

/**
 * A release records which version of its service's variables it ran (docs/secrets.md#versions).
 * The version must mean "not written since" whoever writes (the API, the worker, a previous
 * release during a rolling upgrade, an operator's SQL), since the rollback rule trusts it: a
 * deploy token may go back to a release of the service's current version without comparing values.
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

const versionOf = async (serviceId: string) =>
  (await h.container.db.service.findUniqueOrThrow({ where: { id: serviceId } })).variablesVersion;
const patch = (serviceId: string, payload: object) =>
  h.app.inject({
    method: 'PATCH',
    url: `/api/services/${serviceId}`,
    headers: { authorization: owner.auth },
    payload,
  });

describe("a service's variables version", () => {
  it('counts every write of the variables or their secret marks, and nothing else', async () => {
    const { id } = await h.createService(owner.auth, { customer_id: f.customerA, variables: { A: '1' } });
    const created = await versionOf(id);

    expect((await patch(id, { variables: { A: '2' } })).statusCode).toBe(200);
    expect(await versionOf(id)).toBe(created + 1);
    expect((await patch(id, { secret_variables: { TOKEN: 'first-token' } })).statusCode).toBe(200);
    expect(await versionOf(id)).toBe(created + 2);

    // Writes of other columns leave it alone.
    await h.container.db.service.update({ where: { id }, data: { status: 'running' } });
    await h.container.db.$executeRaw`UPDATE services SET git_branch = 'main' WHERE id = ${id}`;
    expect(await versionOf(id)).toBe(created + 2);

    // A writer that knows nothing of versions (a previous release, an operator's SQL) bumps it too.
    await h.container.db.$executeRaw`UPDATE services SET secret_names = '{}'::jsonb WHERE id = ${id}`;
    expect(await versionOf(id)).toBe(created + 3);
    await h.container.db.$executeRaw`UPDATE services SET variables = '{}'::jsonb WHERE id = ${id}`;
    expect(await versionOf(id)).toBe(created + 4);
  });
});

describe('rollback by a deploy token, by version', () => {
  async function deployToken(serviceId: string): Promise<string> {
    const response = await h.app.inject({
      method: 'POST',
      url: '/api/auth/api-keys',
      headers: ownerSession,
      payload: { name: 'ci', service_id: serviceId, actions: ['read', 'deploy'] },
    });
    expect(response.statusCode).toBe(201);
    return `Bearer ${json<{ key: string }>(response).key}`;
  }
  const rollback = (auth: string, serviceId: string, deploymentId: string) =>
    h.app.inject({
      method: 'POST',
      url: `/api/services/${serviceId}/rollback`,
      headers: { authorization: auth },
      payload: { deployment_id: deploymentId },
    });
  /** Marks a release as having run version `version` of its service's variables. */
  const recordVersion = (deploymentId: string, version: number) =>
    h.container.db.deployment.update({
      where: { id: deploymentId },
      data: { sourceVariablesVersion: version },
    });

  it('goes back to a release of the current version; of an older one, only if the values are the same', async () => {
    const { id, deploy_job_id } = await h.createService(owner.auth, {
      customer_id: f.customerA,
      variables: { API_TOKEN: 'token-a' },
    });
    await settleFirst(h, id, deploy_job_id, {
      at: 0,
      compose: COMPOSE_BUSYBOX,
      variables: { API_TOKEN: 'token-a' },
    });
    await recordVersion(deploy_job_id, await versionOf(id));
    const token = await deployToken(id);

    // Rotated, then rotated back: two versions later, the same values: the release may run again.
    expect((await patch(id, { variables: { API_TOKEN: 'token-b' } })).statusCode).toBe(200);
    expect((await patch(id, { variables: { API_TOKEN: 'token-a' } })).statusCode).toBe(200);
    await h.container.db.deployment.updateMany({
      where: { serviceId: id, status: 'queued' },
      data: { status: 'cancelled' },
    });
    const current = await addDeployment(h, id, {
      at: 60,
      compose: COMPOSE_BUSYBOX,
      variables: { API_TOKEN: 'token-a' },
    });
    await recordVersion(current, await versionOf(id));
    expect((await rollback(token, id, deploy_job_id)).statusCode).toBe(200);
    await h.container.db.deployment.updateMany({
      where: { serviceId: id, status: 'queued' },
      data: { status: 'cancelled' },
    });

    // Rotated for good: the old release would bring token-a back, which only `manage` may do.
    expect((await patch(id, { variables: { API_TOKEN: 'token-c' } })).statusCode).toBe(200);
    await h.container.db.deployment.updateMany({
      where: { serviceId: id, status: 'queued' },
      data: { status: 'cancelled' },
    });
    const latest = await addDeployment(h, id, {
      at: 120,
      compose: COMPOSE_BUSYBOX,
      variables: { API_TOKEN: 'token-c' },
    });
    await recordVersion(latest, await versionOf(id));
    const refused = await rollback(token, id, deploy_job_id);
    expect(refused.statusCode).toBe(403);
    expect(json<{ detail: string }>(refused).detail).toContain('variables API_TOKEN');

    // The release of the current version runs the current values: an images-only rollback.
    await addDeployment(h, id, { at: 180, compose: COMPOSE_BUSYBOX, variables: { API_TOKEN: 'token-c' } });
    expect((await rollback(token, id, latest)).statusCode).toBe(200);
  });
});
