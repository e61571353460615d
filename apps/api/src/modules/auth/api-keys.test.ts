import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digestApiKey, hasApiKeyShape } from '@hostctl/auth-policy';
import { createSessionStore } from '../../auth/session-store.js';
import { json } from '../../test-support/harness.js';
import {
  createAuthHarness,
  provision,
  seedKey,
  TEST_CALLBACK,
  TEST_ORIGIN,
  testAccount,
  uniqueCustomer,
  type AuthHarness,
} from './test-support/auth-harness.js';
import { startDevIdpProcess, type DevIdpProcess } from './test-support/dev-idp-process.js';
import { signIn } from './test-support/oidc-login.js';

const erin = testAccount('erin');
let erinId: string;
let session: string;
let idp: DevIdpProcess;
let a: AuthHarness;
let b: AuthHarness; // a second API instance sharing Postgres and Redis: another replica

beforeAll(async () => {
  idp = await startDevIdpProcess({
    accounts: [erin],
    redirectUris: [TEST_CALLBACK],
    postLogoutRedirectUris: [],
  });
  a = await createAuthHarness({ OIDC_ISSUER: idp.issuer });
  b = await createAuthHarness({ OIDC_ISSUER: idp.issuer, QUEUE_PREFIX: a.config.QUEUE_PREFIX });
  erinId = (await provision(a.store, erin, 'operator')).id;
  session = (await signIn(a.app, erin)).session;
});
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
  await idp?.stop();
});

const create = (
  payload: unknown,
  headers: Record<string, string> = { cookie: session, origin: TEST_ORIGIN },
) => a.app.inject({ method: 'POST', url: '/api/auth/api-keys', headers, payload: payload as object });
const list = (headers: Record<string, string>, app = a.app) =>
  app.inject({ method: 'GET', url: '/api/auth/api-keys', headers });
const revoke = (id: string, headers: Record<string, string>, app = a.app) =>
  app.inject({ method: 'DELETE', url: `/api/auth/api-keys/${id}`, headers });
const me = (authorization: string, app = a.app) =>
  app.inject({ method: 'GET', url: '/api/auth/me', headers: { authorization } });

interface Created {
  id: string;
  name: string;
  key: string;
  created_at: string;
  expires_at: string | null;
}

describe('POST /api/auth/api-keys', () => {
  it('creates a key shown once, in the hsk_ format with checksum, stored only as a digest', async () => {
    const response = await create({ name: 'ci deploys' });
    expect(response.statusCode).toBe(201);
    const body = json<Created>(response);
    expect(Object.keys(body).sort()).toEqual(['created_at', 'expires_at', 'id', 'key', 'limits', 'name']);
    expect(body).toMatchObject({
      name: 'ci deploys',
      expires_at: null,
      limits: { service_id: null, customer_id: null, actions: null },
    });
    expect(body.key).toMatch(/^hsk_[0-9A-Za-z]{36}$/);
    expect(hasApiKeyShape(body.key)).toBe(true);
    const row = await a.container.db.apiKey.findUniqueOrThrow({ where: { id: body.id } });
    expect(row.digest).toBe(digestApiKey(body.key));
    expect(JSON.stringify(row)).not.toContain(body.key);
    expect(json(await me(`Bearer ${body.key}`))).toMatchObject({ id: erinId, role: 'operator' });
  });

  it('refuses to mint an unlimited key with a key (narrower keys: key-minting.test.ts)', async () => {
    const key = json<Created>(await create({ name: 'parent' })).key;
    const response = await create({ name: 'child' }, { authorization: `Bearer ${key}` });
    expect(response.statusCode).toBe(403);
    expect(json(response)).toMatchObject({ code: 'forbidden' });
    expect(json(response).detail).toMatch(/only mint a limited key.*signed-in session/);
  });

  it.each([
    [{}, '/body/name'],
    [{ name: '' }, '/body/name'],
    [{ name: '   ' }, '/body/name'],
    [{ name: 'x'.repeat(101) }, '/body/name'],
    [{ name: 'tab\there' }, '/body/name'],
    [{ name: 42 }, '/body/name'],
    [{ name: 'ok', scope: 'admin' }, '/body/scope'],
    [{ name: 'ok', expires_at: 'tomorrow' }, '/body/expires_at'],
    [{ name: 'ok', expires_at: '2030-01-01' }, '/body/expires_at'],
    [{ name: 'ok', expires_at: '2020-01-01T00:00:00Z' }, '/body/expires_at'],
  ])('refuses %j with 400 naming %s', async (payload, path) => {
    const response = await create(payload);
    expect(response.statusCode).toBe(400);
    const errors = json<{ errors: { path: string }[] }>(response).errors;
    expect(errors.map((e) => e.path)).toContain(path);
  });

  it('accepts an explicit null and a future RFC 3339 expiry', async () => {
    expect(json<Created>(await create({ name: 'never', expires_at: null })).expires_at).toBeNull();
    const at = new Date(Date.now() + 86_400_000).toISOString();
    expect(json<Created>(await create({ name: 'tomorrow', expires_at: at })).expires_at).toBe(at);
    const offset = json<Created>(await create({ name: 'offset', expires_at: '2999-01-01T02:00:00+02:00' }));
    expect(offset.expires_at).toBe('2999-01-01T00:00:00.000Z');
    // A leap second at the very end of year 9999 stays in 9999 (new Date() would roll into 10000).
    const last = json<Created>(await create({ name: 'last', expires_at: '9999-12-31T23:59:60Z' }));
    expect(last.expires_at).toBe('9999-12-31T23:59:59.000Z');
  });

  it("holds an unscoped user's own keys to the default plan's 100 active (revoked and expired ones do not count)", async () => {
    const frank = await provision(a.store, testAccount('frank'), 'viewer');
    const sessions = createSessionStore({
      redis: a.container.redis,
      prefix: a.config.QUEUE_PREFIX,
      ttlSeconds: 60,
    });
    const franksSession = await sessions.create({
      userId: frank.id,
      createdAt: new Date().toISOString(),
      idToken: null,
    });
    const cookie = `session=${encodeURIComponent(a.app.encodeSecureSession(a.app.createSecureSession({ sid: franksSession.secret }), 'session'))}`;
    const rows = Array.from({ length: 99 }, () => ({ userId: frank.id, name: 'bulk', digest: randomUUID() }));
    await a.container.db.apiKey.createMany({ data: rows });
    await a.container.db.apiKey.createMany({
      data: [
        { userId: frank.id, name: 'revoked', digest: randomUUID(), revokedAt: new Date() },
        { userId: frank.id, name: 'expired', digest: randomUUID(), expiresAt: new Date(Date.now() - 1000) },
      ],
    });
    const headers = { cookie, origin: TEST_ORIGIN };
    expect((await create({ name: 'the 100th' }, headers)).statusCode).toBe(201);
    const refused = await create({ name: 'the 101st' }, headers);
    expect(refused.statusCode).toBe(409);
    expect(json(refused)).toMatchObject({
      code: 'quota_exceeded',
      quota: { name: 'api_keys', limit: 100, usage: 100, requested: 1, customer_id: null },
    });
    expect(json(refused).detail).toMatch(/you use 100 of 100 active API keys/);
  });
});

describe('GET /api/auth/api-keys', () => {
  it('lists own unrevoked keys without secrets, with last_used_at once used, by session or key', async () => {
    const used = json<Created>(await create({ name: 'used' }));
    const unused = json<Created>(await create({ name: 'unused' }));
    const gone = json<Created>(await create({ name: 'gone' }));
    expect((await revoke(gone.id, { cookie: session, origin: TEST_ORIGIN })).statusCode).toBe(204);
    expect((await me(`Bearer ${used.key}`)).statusCode).toBe(200);
    const other = await provision(a.store, testAccount('other'), 'operator');
    const othersKey = await seedKey(a.store, other.id);

    const callers: Record<string, string>[] = [{ cookie: session }, { authorization: `Bearer ${used.key}` }];
    for (const headers of callers) {
      const response = await list(headers);
      expect(response.statusCode).toBe(200);
      const body = json<{ data: Record<string, unknown>[]; total: number }>(response);
      expect(body.total).toBe(body.data.length);
      expect(JSON.stringify(body)).not.toMatch(/hsk_|digest/);
      const ids = body.data.map((item) => item.id);
      expect(ids).toEqual(expect.arrayContaining([used.id, unused.id]));
      expect(ids).not.toContain(gone.id);
      expect(ids).not.toContain(othersKey.id);
      const usedItem = body.data.find((item) => item.id === used.id)!;
      expect(Object.keys(usedItem).sort()).toEqual([
        'created_at',
        'expires_at',
        'id',
        'last_used_at',
        'limits',
        'name',
      ]);
      expect(usedItem.last_used_at).toEqual(expect.any(String));
      expect(body.data.find((item) => item.id === unused.id)!.last_used_at).toBeNull();
    }
  });
});

describe('DELETE /api/auth/api-keys/:id', () => {
  it('revokes a key on one instance and the other rejects it on the very next request', async () => {
    const { id, key } = json<Created>(await create({ name: 'replicated' }));
    expect((await me(`Bearer ${key}`, b.app)).statusCode).toBe(200);
    expect((await revoke(id, { cookie: session, origin: TEST_ORIGIN })).statusCode).toBe(204);
    const rejected = await me(`Bearer ${key}`, b.app);
    expect(rejected.statusCode).toBe(401);
    expect(rejected.headers['www-authenticate']).toMatch(/^Bearer/);
    expect(json(rejected).detail).toMatch(/revoked/);
    expect((await me(`Bearer ${key}`)).statusCode).toBe(401);
  });

  it('rejects an expired key at once on both instances', async () => {
    const { id, key } = json<Created>(
      await create({ name: 'short-lived', expires_at: new Date(Date.now() + 60_000).toISOString() }),
    );
    expect((await me(`Bearer ${key}`, b.app)).statusCode).toBe(200);
    await a.container.db.apiKey.update({ where: { id }, data: { expiresAt: new Date(Date.now() - 1) } });
    for (const app of [a.app, b.app]) {
      const response = await me(`Bearer ${key}`, app);
      expect(response.statusCode).toBe(401);
      expect(json(response).detail).toMatch(/expired/);
    }
  });

  it('lets a key revoke itself', async () => {
    const { id, key } = json<Created>(await create({ name: 'self' }));
    expect((await revoke(id, { authorization: `Bearer ${key}` }, b.app)).statusCode).toBe(204);
    expect((await me(`Bearer ${key}`)).statusCode).toBe(401);
  });

  it("answers 404 for unknown, already revoked and other users' keys; admins may revoke any key", async () => {
    const other = await provision(a.store, testAccount('victim'), 'viewer');
    const othersKey = await seedKey(a.store, other.id);
    const headers = { cookie: session, origin: TEST_ORIGIN };
    expect((await revoke(randomUUID(), headers)).statusCode).toBe(404);
    expect((await revoke(othersKey.id, headers)).statusCode).toBe(404);
    expect((await me(othersKey.auth)).statusCode).toBe(200);

    const customer = await uniqueCustomer(a.store);
    const scopedAdmin = await seedKey(
      a.store,
      (await provision(a.store, testAccount('scoped-admin'), 'admin', customer.id)).id,
    );
    expect((await revoke(othersKey.id, { authorization: scopedAdmin.auth })).statusCode).toBe(404);

    const admin = await seedKey(a.store, (await provision(a.store, testAccount('admin'), 'admin')).id);
    expect((await revoke(othersKey.id, { authorization: admin.auth })).statusCode).toBe(204);
    expect((await revoke(othersKey.id, { authorization: admin.auth })).statusCode).toBe(404);
    expect((await me(othersKey.auth)).statusCode).toBe(401);
  });
});

describe("keys carry their user's current role and customer scope", () => {
  it('applies a role downgrade and a customer change to the key at once, on every instance', async () => {
    const customer = await uniqueCustomer(a.store);
    const user = await provision(a.store, testAccount('grace'), 'operator', customer.id);
    const key = await seedKey(a.store, user.id);
    const probe = (method: 'GET' | 'POST', app = a.app) =>
      app.inject({
        method,
        url: `/api/test-probe/${method === 'GET' ? 'read' : 'write'}`,
        headers: { authorization: key.auth },
      });

    expect(json(await probe('GET'))).toEqual({
      role: 'operator',
      via: 'api_key',
      scope: `customer:${customer.id}`,
    });
    expect((await probe('POST', b.app)).statusCode).toBe(200);

    await a.container.db.user.update({ where: { id: user.id }, data: { role: 'viewer' } });
    for (const app of [a.app, b.app]) {
      const refused = await probe('POST', app);
      expect(refused.statusCode).toBe(403);
      expect(json(refused).detail).toMatch(/viewer/);
      expect(json(await probe('GET', app))).toMatchObject({ role: 'viewer' });
    }
    // The real services route agrees: authorization happens before the body is even validated.
    const services = await a.app.inject({
      method: 'POST',
      url: '/api/services',
      headers: { authorization: key.auth },
      payload: {},
    });
    expect(services.statusCode).toBe(403);

    await a.container.db.user.update({ where: { id: user.id }, data: { customerId: null } });
    expect(json(await probe('GET', b.app))).toMatchObject({ role: 'viewer', scope: 'none' });
  });
});
