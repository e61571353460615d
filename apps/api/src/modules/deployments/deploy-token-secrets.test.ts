import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildFixtures, type Caller, type Fixtures } from '../../authz/authz-fixtures.js';
import { COMPOSE_BUSYBOX, createHarness, json, type Harness } from '../../test-support/harness.js';
import { addDeployment, settleFirst } from '../../test-support/releases.js';

/**
 * The rollback rule (docs/secrets.md#rollback-what-manage-guards) with secret variables: a secret
 * is a variable whose value is hidden, so a rollback that would change one (its value, or whether
 * it is secret at all) needs `manage`, and values and marks always go back together.
 * No worker runs here: releases are deployment rows as the worker leaves them.
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

const AT = '2026-01-01T00:00:00.000Z';
const MARKED = { DB_PASSWORD: AT };

/** A running service whose secret DB_PASSWORD was `first` in its first release and is `current` now. */
async function serviceWithSecret(first: string, current: string) {
  const { id, deploy_job_id } = await h.createService(owner.auth, {
    customer_id: f.customerA,
    secret_variables: { DB_PASSWORD: first },
  });
  await settleFirst(h, id, deploy_job_id, {
    at: 0,
    compose: COMPOSE_BUSYBOX,
    variables: { DB_PASSWORD: first },
    secretNames: MARKED,
  });
  const latest = await addDeployment(h, id, {
    at: 60,
    compose: COMPOSE_BUSYBOX,
    variables: { DB_PASSWORD: current },
    secretNames: MARKED,
  });
  await h.container.db.service.update({
    where: { id },
    data: { variables: { DB_PASSWORD: current }, secretNames: MARKED, status: 'running' },
  });
  return { serviceId: id, first: deploy_job_id, latest };
}

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

const post = (auth: string, url: string, payload?: object) =>
  h.app.inject({ method: 'POST', url, headers: { authorization: auth }, ...(payload ? { payload } : {}) });
const detailOf = async (serviceId: string) =>
  json<{ variables: Record<string, string>; secret_variables: Record<string, unknown> }>(
    await h.app.inject({
      method: 'GET',
      url: `/api/services/${serviceId}`,
      headers: { authorization: owner.auth },
    }),
  );

describe('rollback by a deploy token', () => {
  it('is refused when the release ran another secret value; the problem names it, never a value', async () => {
    const { serviceId, first } = await serviceWithSecret('leaked-secret-v1', 'rotated-secret-v2');
    const token = await deployToken(serviceId);
    const refused = await post(token, `/api/services/${serviceId}/rollback`, { deployment_id: first });
    expect(refused.statusCode).toBe(403);
    expect(json<{ detail: string }>(refused).detail).toContain('variables DB_PASSWORD');
    expect(json<{ detail: string }>(refused).detail).toContain('manage');
    expect(refused.body).not.toContain('leaked-secret-v1');
    expect(refused.body).not.toContain('rotated-secret-v2');
  });

  it('is refused when the release ran the same value as a plain variable (it would show the secret)', async () => {
    const { serviceId } = await serviceWithSecret('same-value-1', 'same-value-1');
    const plainBefore = await addDeployment(h, serviceId, {
      at: 30,
      compose: COMPOSE_BUSYBOX,
      variables: { DB_PASSWORD: 'same-value-1' },
      secretNames: {},
    });
    const token = await deployToken(serviceId);
    const refused = await post(token, `/api/services/${serviceId}/rollback`, { deployment_id: plainBefore });
    expect(refused.statusCode).toBe(403);
    expect(json<{ detail: string }>(refused).detail).toContain('variables DB_PASSWORD');
  });

  it('is accepted when the release ran the current secret (an images-only rollback)', async () => {
    const { serviceId, latest } = await serviceWithSecret('old-secret', 'kept-secret');
    await addDeployment(h, serviceId, {
      at: 120,
      compose: COMPOSE_BUSYBOX,
      variables: { DB_PASSWORD: 'kept-secret' },
      secretNames: MARKED,
    });
    const token = await deployToken(serviceId);
    const accepted = await post(token, `/api/services/${serviceId}/rollback`, { deployment_id: latest });
    expect(accepted.statusCode).toBe(200);
  });
});

describe('values and marks go back together', () => {
  it('a cancelled change that made a secret plain leaves it secret, as the release runs it', async () => {
    const { serviceId } = await serviceWithSecret('kept-hidden-v1', 'kept-hidden-v2');
    const changed = await h.app.inject({
      method: 'PATCH',
      url: `/api/services/${serviceId}`,
      headers: { authorization: owner.auth },
      payload: { secret_variables: { DB_PASSWORD: null }, variables: { DB_PASSWORD: 'now-plain' } },
    });
    expect(changed.statusCode).toBe(200);
    expect((await detailOf(serviceId)).variables).toEqual({ DB_PASSWORD: 'now-plain' });
    const deploymentId = json<{ deploy_job_id: string }>(changed).deploy_job_id;
    expect((await post(owner.auth, `/api/deployments/${deploymentId}/cancel`)).statusCode).toBe(200);
    const after = await detailOf(serviceId);
    expect(after.variables).toEqual({});
    expect(Object.keys(after.secret_variables)).toEqual(['DB_PASSWORD']);
    expect(JSON.stringify(after)).not.toContain('kept-hidden-v2');
  });
});

describe('rollback and variable groups (docs/secrets.md#rollback-and-variable-groups)', () => {
  /** A running service with one group: its first release ran the group's version 1, the latest version 2. */
  async function serviceWithGroup() {
    const group = await h.container.db.variableGroup.create({
      data: {
        customerId: f.customerA,
        name: `rollback-group-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`,
        variables: { TOKEN: 'rotated-group-v2' },
        secretNames: { TOKEN: AT },
        version: 2,
      },
    });
    const { id, deploy_job_id } = await h.createService(owner.auth, {
      customer_id: f.customerA,
      variable_groups: [group.id],
    });
    await settleFirst(h, id, deploy_job_id, {
      at: 0,
      compose: COMPOSE_BUSYBOX,
      variables: {},
      secretNames: {},
    });
    const latest = await addDeployment(h, id, {
      at: 60,
      compose: COMPOSE_BUSYBOX,
      variables: {},
      secretNames: {},
    });
    const ran = (version: number) => [{ group_id: group.id, version }];
    await h.container.db.deployment.update({
      where: { id: deploy_job_id },
      data: { sourceVariableGroups: ran(1) },
    });
    await h.container.db.deployment.update({ where: { id: latest }, data: { sourceVariableGroups: ran(2) } });
    await h.container.db.service.update({
      where: { id },
      data: { status: 'running', variables: {}, secretNames: {} },
    });
    return { serviceId: id, groupId: group.id, first: deploy_job_id, latest };
  }

  it('a deploy token may not go back to a release that ran an older group version: 403 naming the group', async () => {
    const { serviceId, groupId, first } = await serviceWithGroup();
    const token = await deployToken(serviceId);
    const refused = await post(token, `/api/services/${serviceId}/rollback`, { deployment_id: first });
    expect(refused.statusCode).toBe(403);
    expect(json<{ detail: string }>(refused).detail).toContain(`variable groups ${groupId}`);
    expect(refused.body).not.toContain('rotated-group-v2');
    // manage may (the release's plan runs; the group itself is not changed).
    const managed = await post(owner.auth, `/api/services/${serviceId}/rollback`, { deployment_id: first });
    expect(managed.statusCode).toBe(200);
    const group = await h.container.db.variableGroup.findUniqueOrThrow({ where: { id: groupId } });
    expect(group.version).toBe(2);
  });

  it('a deploy token may go back to a release that ran the current group versions', async () => {
    const { serviceId, latest } = await serviceWithGroup();
    await addDeployment(h, serviceId, { at: 120, compose: COMPOSE_BUSYBOX, variables: {}, secretNames: {} });
    const token = await deployToken(serviceId);
    const accepted = await post(token, `/api/services/${serviceId}/rollback`, { deployment_id: latest });
    expect(accepted.statusCode, accepted.body).toBe(200);
  });
});
