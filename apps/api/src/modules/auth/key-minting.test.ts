import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildFixtures, type Caller, type Fixtures } from '../../authz/authz-fixtures.js';
import { createHarness, json, type Harness } from '../../test-support/harness.js';

/**
 * Issue 27, class 10: a platform team scripts CI onboarding with an API key. A key with `manage`
 * mints narrower keys for its own scope: never wider, never unlimited, never outliving it.
 * Route × role × scope answers are in authz/route-table.ts; this plays the flows.
 */
let h: Harness;
let f: Fixtures;
let operator: Caller;
let serviceS: string;
let serviceT: string;
let serviceOfB: string;

interface Created {
  id: string;
  key: string;
  expires_at: string | null;
  limits: { service_id: string | null; customer_id: string | null; actions: string[] | null };
}

const caller = (role: Caller['role'], scope: Caller['scope']) =>
  f.callers.find((c) => c.role === role && c.scope === scope)!;

const mint = (auth: string | Record<string, string>, body: Record<string, unknown>) =>
  h.app.inject({
    method: 'POST',
    url: '/api/auth/api-keys',
    headers: typeof auth === 'string' ? { authorization: auth } : auth,
    payload: { name: 'ci', ...body },
  });

/** A key of the operator of A, made from a browser session as before. */
async function sessionKey(body: Record<string, unknown>): Promise<Created> {
  const response = await mint(await f.session(operator), body);
  expect(response.statusCode).toBe(201);
  return json<Created>(response);
}
const bearer = (created: Created) => `Bearer ${created.key}`;
const as = (auth: string, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
  h.app.inject({ method, url, headers: { authorization: auth }, ...(payload ? { payload } : {}) });

function expectRefusal(response: Awaited<ReturnType<typeof mint>>, detail: RegExp) {
  expect(response.statusCode).toBe(403);
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(json<{ detail: string }>(response).detail).toMatch(detail);
}

beforeAll(async () => {
  h = await createHarness({ LIFECYCLE_WAIT_MS: '100' });
  f = await buildFixtures(h);
  operator = caller('operator', 'own');
  serviceS = await f.freshService();
  serviceT = await f.freshService();
  serviceOfB = (await h.createService(f.root, { customer_id: f.customerB })).id;
});
afterAll(async () => h?.close());

describe('an operator key scripts CI onboarding', () => {
  it('mints a read + deploy token of one service, which redeploys it and nothing more', async () => {
    const minted = await mint(operator.auth, { service_id: serviceS, actions: ['read', 'deploy'] });
    expect(minted.statusCode).toBe(201);
    const token = json<Created>(minted);
    expect(token.limits).toEqual({
      service_id: serviceS,
      customer_id: f.customerA,
      actions: ['read', 'deploy'],
    });
    expect((await as(bearer(token), 'POST', `/api/services/${serviceS}/redeploy`)).statusCode).toBe(200);
    expect(
      (await as(bearer(token), 'PATCH', `/api/services/${serviceS}`, { variables: { A: '1' } })).statusCode,
    ).toBe(403);
    expect((await as(bearer(token), 'POST', `/api/services/${serviceT}/redeploy`)).statusCode).toBe(403);
  });

  it('never an unlimited key', async () => {
    expectRefusal(await mint(operator.auth, {}), /only mint a limited key/);
    expectRefusal(await mint(operator.auth, { service_id: serviceS }), /only mint a limited key/);
  });

  it("never for a customer its owner cannot see (403 or 404 as for the owner's own requests)", async () => {
    expect((await mint(operator.auth, { service_id: serviceOfB, actions: ['read'] })).statusCode).toBe(404);
  });

  it("a viewer's key mints nothing: its role may not manage", async () => {
    expectRefusal(await mint(caller('viewer', 'own').auth, { actions: ['read'] }), /role \(viewer\)/);
  });
});

describe('a limited key mints only narrower keys for its own scope', () => {
  it('a service key with manage: its service, filled in when not named; nothing else', async () => {
    const minter = bearer(await sessionKey({ service_id: serviceS, actions: ['read', 'deploy', 'manage'] }));
    const minted = await mint(minter, { actions: ['read', 'deploy'] });
    expect(minted.statusCode).toBe(201);
    expect(json<Created>(minted).limits).toMatchObject({ service_id: serviceS, actions: ['read', 'deploy'] });
    expectRefusal(await mint(minter, { service_id: serviceT, actions: ['read'] }), /limited to service/);
    expectRefusal(await mint(minter, { customer_id: f.customerA, actions: ['read'] }), /limited to service/);
    expectRefusal(await mint(minter, { actions: ['read', 'operate'] }), /cannot mint a key that may operate/);
  });

  it('a key without manage mints nothing', async () => {
    const minter = bearer(await sessionKey({ service_id: serviceS, actions: ['read', 'deploy'] }));
    expectRefusal(await mint(minter, { actions: ['read'] }), /this route needs manage/);
  });

  it("a customer key: its customer's services, and no other customer's (403 naming the limit)", async () => {
    const minter = bearer(
      await sessionKey({ customer_id: f.customerA, actions: ['read', 'deploy', 'manage'] }),
    );
    const ofItsOwn = await mint(minter, { service_id: serviceT, actions: ['deploy'] });
    expect(ofItsOwn.statusCode).toBe(201);
    const whole = await mint(minter, { actions: ['read'] });
    expect(json<Created>(whole).limits).toMatchObject({ customer_id: f.customerA, service_id: null });
    expectRefusal(await mint(minter, { service_id: serviceOfB, actions: ['read'] }), /limited to customer/);
    expectRefusal(await mint(minter, { customer_id: f.customerB, actions: ['read'] }), /limited to customer/);
  });
});

describe('a minted key never outlives its minter', () => {
  it('revoking the minter revokes what it minted, at once', async () => {
    const minter = await sessionKey({});
    const child = json<Created>(
      await mint(bearer(minter), { service_id: serviceS, actions: ['read', 'manage'] }),
    );
    const grandchild = json<Created>(await mint(bearer(child), { actions: ['read'] }));
    expect((await as(bearer(grandchild), 'GET', `/api/services/${serviceS}`)).statusCode).toBe(200);
    expect((await as(bearer(minter), 'DELETE', `/api/auth/api-keys/${minter.id}`)).statusCode).toBe(204);
    expect((await as(bearer(child), 'GET', `/api/services/${serviceS}`)).statusCode).toBe(401);
    expect((await as(bearer(grandchild), 'GET', `/api/services/${serviceS}`)).statusCode).toBe(401);
  });

  it("expires no later than its minter: the minter's expiry by default, a later one refused", async () => {
    const expiresAt = new Date(Date.now() + 3600_000).toISOString();
    const minter = bearer(await sessionKey({ expires_at: expiresAt }));
    const child = await mint(minter, { service_id: serviceS, actions: ['read'] });
    expect(json<Created>(child).expires_at).toBe(expiresAt);
    const later = await mint(minter, {
      service_id: serviceS,
      actions: ['read'],
      expires_at: new Date(Date.now() + 7200_000).toISOString(),
    });
    expect(later.statusCode).toBe(400);
    expect(later.body).toContain('/body/expires_at');
  });
});
