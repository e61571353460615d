import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Role } from '@hostctl/domain';
import { buildFixtures, type Caller, type Fixtures } from '../../authz/authz-fixtures.js';
import { createHarness, json, type Harness } from '../../test-support/harness.js';

/**
 * Deploy tokens end to end through the API (docs/auth.md#deploy-tokens): created from a session
 * with limits that cannot exceed the creator, then used as CI would. route-table-driven refusals
 * across every route are in authz/key-limits.authz.test.ts.
 */
let h: Harness;
let f: Fixtures;
let serviceS: string;
let serviceT: string;
let deploymentOfT: string;

const caller = (role: Role, scope: Caller['scope']) =>
  f.callers.find((c) => c.role === role && c.scope === scope)!;

interface Created {
  id: string;
  key: string;
  limits: { service_id: string | null; customer_id: string | null; actions: string[] | null };
}

async function createKey(who: Caller, body: Record<string, unknown>) {
  return h.app.inject({
    method: 'POST',
    url: '/api/auth/api-keys',
    headers: await f.session(who),
    payload: { name: 'ci', ...body },
  });
}
async function keyOf(who: Caller, body: Record<string, unknown>): Promise<string> {
  const response = await createKey(who, body);
  expect(response.statusCode).toBe(201);
  return `Bearer ${json<Created>(response).key}`;
}
const as = (auth: string, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
  h.app.inject({ method, url, headers: { authorization: auth }, ...(payload ? { payload } : {}) });

beforeAll(async () => {
  h = await createHarness({ LIFECYCLE_WAIT_MS: '100' });
  f = await buildFixtures(h);
  serviceS = await f.freshService();
  serviceT = await f.freshService();
  deploymentOfT = (await h.container.db.deployment.findFirstOrThrow({ where: { serviceId: serviceT } })).id;
});
afterAll(async () => h?.close());

describe('a read + deploy token of one service (the CI key)', () => {
  let key: string;
  beforeAll(async () => {
    key = await keyOf(caller('operator', 'own'), { service_id: serviceS, actions: ['read', 'deploy'] });
  });

  it('is listed with its limits, and its secret is never shown again', async () => {
    const list = await h.app.inject({
      method: 'GET',
      url: '/api/auth/api-keys',
      headers: await f.session(caller('operator', 'own')),
    });
    const item = json<{ data: Created[] }>(list).data.find((k) => k.limits.service_id === serviceS);
    expect(item?.limits).toEqual({
      service_id: serviceS,
      customer_id: f.customerA,
      actions: ['read', 'deploy'],
    });
    expect(list.body).not.toContain(key.slice('Bearer '.length));
  });

  it('reads and redeploys its service and follows the deployment', async () => {
    expect((await as(key, 'GET', `/api/services/${serviceS}`)).statusCode).toBe(200);
    expect((await as(key, 'GET', `/api/services/${serviceS}/events`)).statusCode).toBe(200);
    expect((await as(key, 'GET', `/api/services/${serviceS}/logs`)).statusCode).toBe(200);
    const redeploy = await as(key, 'POST', `/api/services/${serviceS}/redeploy`);
    expect(redeploy.statusCode).toBe(200);
    const deployment = json<{ deploy_job_id: string }>(redeploy).deploy_job_id;
    expect((await as(key, 'GET', `/api/deployments/${deployment}`)).statusCode).toBe(200);
  });

  it('lists only its service', async () => {
    const list = json<{ data: { id: string }[]; total: number }>(await as(key, 'GET', '/api/services'));
    expect(list).toMatchObject({ total: 1, data: [{ id: serviceS }] });
    const filteredOut = json<{ total: number }>(await as(key, 'GET', '/api/services?status=failed'));
    expect(filteredOut.total).toBe(0);
  });

  it.each([
    ['POST', '/restart', /actions read, deploy; this route needs operate/],
    ['POST', '/stop', /needs operate/],
    ['PATCH', '', /needs manage/],
    ['DELETE', '', /needs manage/],
  ] as const)('cannot %s %s its service: 403 naming the actions', async (method, suffix, detail) => {
    const response = await as(
      key,
      method,
      `/api/services/${serviceS}${suffix}`,
      method === 'PATCH' ? { variables: { A: '1' } } : undefined,
    );
    expect(response.statusCode).toBe(403);
    expect(response.headers['content-type']).toMatch(/problem\+json/);
    expect(json(response).detail).toMatch(detail);
  });

  it('gets the same 403 for another service, its deployment, and ids that do not exist', async () => {
    for (const url of [
      `/api/services/${serviceT}`,
      `/api/services/${randomUUID()}`,
      `/api/deployments/${deploymentOfT}`,
      `/api/deployments/${randomUUID()}`,
    ]) {
      const response = await as(key, 'GET', url);
      expect({ url, status: response.statusCode }).toEqual({ url, status: 403 });
      expect(json(response).detail).toBe(`this API key is limited to service ${serviceS}`);
    }
    expect((await as(key, 'POST', `/api/services/${serviceT}/redeploy`)).statusCode).toBe(403);
  });

  it('manages no keys and reads no audit log', async () => {
    expect((await as(key, 'POST', '/api/auth/api-keys', { name: 'child' })).statusCode).toBe(403);
    expect((await as(key, 'GET', '/api/auth/api-keys')).statusCode).toBe(403);
    expect((await as(key, 'GET', '/api/auth/me')).statusCode).toBe(200);
  });
});

describe('a customer-limited token', () => {
  it("sees and changes its customer's services only, and creates services there only", async () => {
    const key = await keyOf(caller('operator', 'unscoped'), { customer_id: f.customerA });
    const serviceOfB = (await h.createService(f.root, { customer_id: f.customerB })).id;
    expect((await as(key, 'GET', `/api/services/${serviceT}`)).statusCode).toBe(200);
    const refused = await as(key, 'GET', `/api/services/${serviceOfB}`);
    expect(refused.statusCode).toBe(403);
    expect(json(refused).detail).toBe(`this API key is limited to customer ${f.customerA}`);
    const list = json<{ data: { customer_id: string }[] }>(
      await as(key, 'GET', '/api/services?per_page=100'),
    );
    expect(list.data.length).toBeGreaterThan(0);
    expect(new Set(list.data.map((s) => s.customer_id))).toEqual(new Set([f.customerA]));
    const customers = json<{ data: { id: string }[] }>(await as(key, 'GET', '/api/customers'));
    expect(customers.data.map((c) => c.id)).toEqual([f.customerA]);
    const compose = 'services:\n  web:\n    image: local/busybox:1\n';
    const make = (customer: string) =>
      as(key, 'POST', '/api/services', {
        name: `k-${randomUUID().slice(0, 8)}`,
        customer_id: customer,
        deploy_method: 'compose',
        compose,
      });
    expect((await make(f.customerA)).statusCode).toBe(201);
    expect((await make(f.customerB)).statusCode).toBe(403);
    expect((await as(key, 'GET', '/api/users')).statusCode).toBe(403);
  });
});

describe('idempotent replays', () => {
  it("a limited key never replays what its owner's wider key did under the same Idempotency-Key", async () => {
    const owner = caller('operator', 'unscoped');
    const limited = await keyOf(owner, { customer_id: f.customerA });
    const body = {
      name: `idem-${randomUUID().slice(0, 8)}`,
      customer_id: f.customerB,
      deploy_method: 'compose',
      compose: 'services:\n  web:\n    image: local/busybox:1\n',
    };
    const post = (auth: string) =>
      h.app.inject({
        method: 'POST',
        url: '/api/services',
        headers: { authorization: auth, 'idempotency-key': `idem-${body.name}` },
        payload: body,
      });
    expect((await post(owner.auth)).statusCode).toBe(201);
    const replayed = await post(limited);
    expect(replayed.statusCode).toBe(403);
    expect(replayed.body).not.toContain(body.name);
  });
});

describe('a read-only token', () => {
  it('reads and cannot redeploy', async () => {
    const key = await keyOf(caller('admin', 'unscoped'), { actions: ['read'] });
    expect((await as(key, 'GET', `/api/services/${serviceS}`)).statusCode).toBe(200);
    const refused = await as(key, 'POST', `/api/services/${serviceS}/redeploy`);
    expect(refused.statusCode).toBe(403);
    expect(json(refused).detail).toBe('this API key is limited to the actions read; this route needs deploy');
    expect((await as(key, 'GET', '/api/audit-events')).statusCode).toBe(403);
  });
});

describe('limits never exceed the creator', () => {
  it.each([
    ['a viewer giving deploy', 'viewer', 'own', () => ({ actions: ['read', 'deploy'] }), 403],
    ['a viewer giving manage', 'viewer', 'own', () => ({ actions: ['manage'] }), 403],
    [
      'a viewer giving read on its service',
      'viewer',
      'own',
      () => ({ service_id: serviceS, actions: ['read'] }),
      201,
    ],
    [
      "another customer's operator naming A's service",
      'operator',
      'other',
      () => ({ service_id: serviceS }),
      404,
    ],
    [
      "another customer's operator naming customer A",
      'operator',
      'other',
      () => ({ customer_id: f.customerA }),
      404,
    ],
    ['an unscoped viewer naming a service', 'viewer', 'unscoped', () => ({ service_id: serviceS }), 404],
    [
      'anyone naming a service that does not exist',
      'admin',
      'unscoped',
      () => ({ service_id: randomUUID() }),
      404,
    ],
    ['a scoped admin naming its own customer', 'admin', 'own', () => ({ customer_id: f.customerA }), 201],
  ] as const)('%s → %d', async (_label, role, scope, body, expected) => {
    const response = await createKey(caller(role, scope), body());
    expect(response.statusCode).toBe(expected);
    if (expected === 404) expect(json(response).detail).toMatch(/not found/);
    if (expected === 403) expect(json(response).detail).toMatch(/your role \(viewer\) may not/);
  });

  it.each([
    [() => ({ service_id: serviceS, customer_id: f.customerA }), '/body/customer_id'],
    [() => ({ actions: [] }), '/body/actions'],
    [() => ({ actions: ['admin'] }), '/body/actions/0'],
    [() => ({ actions: ['read', 'read'] }), '/body/actions'],
    [() => ({ actions: 'read' }), '/body/actions'],
    [() => ({ service_id: 'not an id!' }), '/body/service_id'],
    [() => ({ customer_id: '' }), '/body/customer_id'],
  ])('refuses %s with 400 naming %s', async (body, path) => {
    const response = await createKey(caller('admin', 'unscoped'), body());
    expect(response.statusCode).toBe(400);
    const errors = json<{ errors: { path: string }[] }>(response).errors;
    expect(errors.map((e) => e.path)).toContain(path);
  });

  it('follows its owner: a role downgrade, a customer change and revocation apply at once', async () => {
    const owner = await h.user('operator', f.customerA);
    const ownerCaller: Caller = {
      role: 'operator',
      scope: 'own',
      userId: owner.id,
      auth: owner.auth,
      customerId: f.customerA,
    };
    const created = json<Created>(
      await createKey(ownerCaller, { service_id: serviceS, actions: ['read', 'deploy'] }),
    );
    const key = `Bearer ${created.key}`;
    expect((await as(key, 'POST', `/api/services/${serviceS}/redeploy`)).statusCode).toBe(200);

    await h.container.db.user.update({ where: { id: owner.id }, data: { role: 'viewer' } });
    const downgraded = await as(key, 'POST', `/api/services/${serviceS}/redeploy`);
    expect(downgraded.statusCode).toBe(403);
    expect(json(downgraded).detail).toMatch(/your role \(viewer\)/);

    await h.container.db.user.update({
      where: { id: owner.id },
      data: { role: 'operator', customerId: f.customerB },
    });
    for (const url of [`/api/services/${serviceS}`, '/api/services', '/api/auth/me']) {
      const moved = await as(key, 'GET', url);
      expect({ url, status: moved.statusCode }).toEqual({ url, status: 403 });
      expect(json(moved).detail).toMatch(/its owner may no longer access/);
    }

    await h.container.db.user.update({ where: { id: owner.id }, data: { customerId: f.customerA } });
    expect((await as(key, 'GET', `/api/services/${serviceS}`)).statusCode).toBe(200);
    const revoke = await h.app.inject({
      method: 'DELETE',
      url: `/api/auth/api-keys/${created.id}`,
      headers: { authorization: owner.auth },
    });
    expect(revoke.statusCode).toBe(204);
    expect((await as(key, 'GET', `/api/services/${serviceS}`)).statusCode).toBe(401);
  });
});
