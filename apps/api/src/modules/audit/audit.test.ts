import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import pino from 'pino';
import type { Role } from '@hostctl/domain';
import { createAuditStore, createDatabase, keyringFromEnvironment } from '@hostctl/db';
import { cookieNames } from '../../auth/session-cookies.js';
import { createSessionStore } from '../../auth/session-store.js';
import { createHarness, json, TEST_DATABASE_URL, type Harness } from '../../test-support/harness.js';
import { startAuditRetention } from './audit-recorder.js';

/**
 * The audit log (docs/audit.md) on the real app and database: what a request leaves behind,
 * that no secret is among it, and who may read it.
 */
let h: Harness;
let customerA: string;
let customerB: string;
let serviceA: string;
let serviceB: string;
const users: Record<string, { id: string; auth: string; keyId: string }> = {};

async function user(name: string, role: Role, customerId: string | null) {
  const created = await h.user(role, customerId);
  const key = await h.container.db.apiKey.findFirstOrThrow({ where: { userId: created.id } });
  users[name] = { ...created, keyId: key.id };
}

/** The row a response left behind, found by its request id (after the writes in flight land). */
async function rowOf(response: LightMyRequestResponse) {
  await h.container.audit.flush();
  const requestId = String(response.headers['x-request-id']);
  return h.container.db.auditEvent.findFirstOrThrow({ where: { requestId } });
}

async function sessionOf(userId: string) {
  const sessions = createSessionStore({
    redis: h.container.redis,
    prefix: h.config.QUEUE_PREFIX,
    ttlSeconds: 600,
  });
  const { secret } = await sessions.create({ userId, createdAt: new Date().toISOString(), idToken: null });
  const sealed = h.app.encodeSecureSession(h.app.createSecureSession({ sid: secret }), 'session');
  return {
    cookie: `${cookieNames(h.config.COOKIE_SECURE).session}=${encodeURIComponent(sealed)}`,
    origin: new URL(h.config.PUBLIC_URL).origin,
  };
}

const list = (auth: string, query = '') =>
  h.app.inject({ method: 'GET', url: `/api/audit-events${query}`, headers: { authorization: auth } });

beforeAll(async () => {
  h = await createHarness({ LIFECYCLE_WAIT_MS: '100' });
  [customerA, customerB] = (await Promise.all([h.customer(), h.customer()])).map((c) => c.id) as [
    string,
    string,
  ];
  await Promise.all([
    user('root', 'admin', null),
    user('adminA', 'admin', customerA),
    user('adminB', 'admin', customerB),
    user('operatorA', 'operator', customerA),
    user('operatorB', 'operator', customerB),
    user('viewerA', 'viewer', customerA),
  ]);
  serviceA = (await h.createService(users.root!.auth, { customer_id: customerA })).id;
  serviceB = (await h.createService(users.root!.auth, { customer_id: customerB })).id;
});
afterAll(async () => h?.close());

describe('what a request leaves behind', () => {
  it('a redeploy: who, what, target, source, request id, status and when', async () => {
    const before = Date.now();
    const response = await h.app.inject({
      method: 'POST',
      url: `/api/services/${serviceA}/redeploy`,
      headers: { authorization: users.operatorA!.auth },
      remoteAddress: '203.0.113.7',
    });
    expect(response.statusCode).toBe(200);
    const row = await rowOf(response);
    expect(row).toMatchObject({
      actorType: 'api_key',
      actorUserId: users.operatorA!.id,
      actorApiKeyId: users.operatorA!.keyId,
      customerId: customerA,
      method: 'POST',
      route: '/api/services/:id/redeploy',
      action: 'services.redeploy',
      targetType: 'service',
      targetId: serviceA,
      statusCode: 200,
      errorCode: null,
      sourceAddress: '203.0.113.7',
      requestId: response.headers['x-request-id'],
    });
    expect(row.occurredAt.getTime()).toBeGreaterThanOrEqual(before - 1000);
  });

  it('failures too: another customer probing (kept with the prober), a viewer, no credentials', async () => {
    const probe = await h.app.inject({
      method: 'POST',
      url: `/api/services/${serviceA}/redeploy`,
      headers: { authorization: users.operatorB!.auth },
    });
    expect(probe.statusCode).toBe(404);
    // The event belongs to B: A's admin is not told of it, and B learns nothing about who owns the id.
    expect(await rowOf(probe)).toMatchObject({
      statusCode: 404,
      errorCode: 'not_found',
      customerId: customerB,
      targetId: serviceA,
    });

    const viewer = await h.app.inject({
      method: 'DELETE',
      url: `/api/services/${serviceA}`,
      headers: { authorization: users.viewerA!.auth },
    });
    expect(await rowOf(viewer)).toMatchObject({
      statusCode: 403,
      errorCode: 'forbidden',
      action: 'services.delete',
      actorUserId: users.viewerA!.id,
    });

    const anonymous = await h.app.inject({ method: 'POST', url: `/api/services/${serviceA}/stop` });
    expect(await rowOf(anonymous)).toMatchObject({
      statusCode: 401,
      errorCode: 'unauthenticated',
      actorType: 'anonymous',
      actorUserId: null,
      customerId: null,
    });
  });

  it('reads and unknown routes are not recorded', async () => {
    const read = await h.app.inject({
      method: 'GET',
      url: `/api/services/${serviceA}`,
      headers: { authorization: users.root!.auth },
    });
    const unknown = await h.app.inject({
      method: 'POST',
      url: '/api/nothing-here',
      headers: { authorization: users.root!.auth },
    });
    await h.container.audit.flush();
    const ids = [read, unknown].map((r) => String(r.headers['x-request-id']));
    expect(await h.container.db.auditEvent.count({ where: { requestId: { in: ids } } })).toBe(0);
  });

  it('key creation and revocation by session, and sign-out, name the key and the user', async () => {
    const session = await sessionOf(users.operatorA!.id);
    const created = await h.app.inject({
      method: 'POST',
      url: '/api/auth/api-keys',
      headers: session,
      payload: { name: 'audited' },
    });
    expect(created.statusCode).toBe(201);
    const { id, key } = json<{ id: string; key: string }>(created);
    expect(await rowOf(created)).toMatchObject({
      actorType: 'user',
      actorUserId: users.operatorA!.id,
      actorApiKeyId: null,
      action: 'auth.api_keys.create',
      targetType: 'api_key',
      targetId: id,
      customerId: customerA,
      statusCode: 201,
    });
    const revoked = await h.app.inject({
      method: 'DELETE',
      url: `/api/auth/api-keys/${id}`,
      headers: session,
    });
    expect(await rowOf(revoked)).toMatchObject({
      action: 'auth.api_keys.delete',
      targetId: id,
      statusCode: 204,
    });
    const signOut = await h.app.inject({ method: 'POST', url: '/api/auth/logout', headers: session });
    expect(await rowOf(signOut)).toMatchObject({
      action: 'auth.sign_out',
      actorUserId: users.operatorA!.id,
      statusCode: 200,
    });
    expect(await everyAuditRowAsText()).not.toContain(key);
  });

  it('never stores a secret: variable values, keys, bodies', async () => {
    const secret = `planted-${randomUUID()}`;
    const patched = await h.app.inject({
      method: 'PATCH',
      url: `/api/services/${serviceA}`,
      headers: { authorization: users.root!.auth },
      payload: { variables: { DB_PASSWORD: secret } },
    });
    expect(patched.statusCode).toBe(200);
    const refused = await h.app.inject({
      method: 'PATCH',
      url: `/api/services/${serviceA}`,
      headers: { authorization: users.root!.auth },
      payload: { variables: { [`bad key ${secret}`]: secret } },
    });
    expect(refused.statusCode).toBe(400);
    const created = await h.createService(users.root!.auth, {
      customer_id: customerA,
      variables: { TOKEN: secret },
    });
    expect((await rowOf(patched)).action).toBe('services.update');
    expect((await rowOf(refused)).errorCode).toBe('validation_failed');
    const createRows = await h.container.db.auditEvent.findMany({ where: { targetId: created.id } });
    expect(createRows).toMatchObject([{ action: 'services.create', statusCode: 201, targetType: 'service' }]);
    expect(await everyAuditRowAsText()).not.toContain(secret);
  });
});

async function everyAuditRowAsText(): Promise<string> {
  const rows = await h.container.db.$queryRaw<{ text: string }[]>`
    SELECT coalesce(string_agg(row_to_json(a)::text, E'\n'), '') AS text FROM audit_events a`;
  return rows[0]?.text ?? '';
}

describe('GET /api/audit-events', () => {
  it('admins only: operators and viewers are refused', async () => {
    expect((await list(users.operatorA!.auth)).statusCode).toBe(403);
    expect((await list(users.viewerA!.auth)).statusCode).toBe(403);
    expect((await h.app.inject({ method: 'GET', url: '/api/audit-events' })).statusCode).toBe(401);
  });

  it("a scoped admin sees its customer's events only; an unscoped admin sees all", async () => {
    for (const service of [serviceA, serviceB]) {
      const response = await h.app.inject({
        method: 'POST',
        url: `/api/services/${service}/redeploy`,
        headers: { authorization: users.root!.auth },
      });
      expect(response.statusCode).toBe(200);
    }
    const probe = await h.app.inject({
      method: 'POST',
      url: `/api/services/${serviceA}/redeploy`,
      headers: { authorization: users.operatorB!.auth },
    });
    expect(probe.statusCode).toBe(404);
    await h.container.audit.flush();
    const totalFor = async (auth: string, service: string, actor = users.root!.id) =>
      json<{ total: number }>(
        await list(auth, `?target_id=${service}&action=services.redeploy&actor_user_id=${actor}`),
      ).total;
    expect(await totalFor(users.adminA!.auth, serviceA)).toBeGreaterThan(0);
    expect(await totalFor(users.adminA!.auth, serviceB)).toBe(0);
    expect(await totalFor(users.adminB!.auth, serviceB)).toBeGreaterThan(0);
    expect(await totalFor(users.adminB!.auth, serviceA)).toBe(0);
    expect(await totalFor(users.root!.auth, serviceB)).toBeGreaterThan(0);
    // B's operator probing A's service (404) is B's event: B's admin sees it, A's does not.
    expect(await totalFor(users.adminB!.auth, serviceA, users.operatorB!.id)).toBeGreaterThan(0);
    expect(await totalFor(users.adminA!.auth, serviceA, users.operatorB!.id)).toBe(0);
    const page = json<{ data: { customer_id: string | null }[] }>(
      await list(users.adminA!.auth, '?per_page=100'),
    );
    expect(page.data.length).toBeGreaterThan(0);
    expect(new Set(page.data.map((e) => e.customer_id))).toEqual(new Set([customerA]));
  });

  it('pages newest first and filters by actor, action, target and time', async () => {
    await user('busy', 'operator', customerA);
    const busy = users.busy!;
    for (const action of ['restart', 'redeploy', 'stop']) {
      await h.app.inject({
        method: 'POST',
        url: `/api/services/${serviceA}/${action}`,
        headers: { authorization: busy.auth },
      });
    }
    await h.container.audit.flush();
    const byActor = `?actor_user_id=${busy.id}`;
    const first = json<{ data: { action: string }[]; total: number; page: number; per_page: number }>(
      await list(users.root!.auth, `${byActor}&per_page=2`),
    );
    expect(first).toMatchObject({ total: 3, page: 1, per_page: 2 });
    expect(first.data.map((e) => e.action)).toEqual(['services.stop', 'services.redeploy']);
    const second = json<{ data: { action: string }[] }>(
      await list(users.root!.auth, `${byActor}&per_page=2&page=2`),
    );
    expect(second.data.map((e) => e.action)).toEqual(['services.restart']);

    const one = json<{ data: Record<string, unknown>[]; total: number }>(
      await list(
        users.root!.auth,
        `${byActor}&action=services.redeploy&target_type=service&target_id=${serviceA}`,
      ),
    );
    expect(one.total).toBe(1);
    expect(one.data[0]).toMatchObject({
      actor: { type: 'api_key', user_id: busy.id, api_key_id: busy.keyId },
      method: 'POST',
      route: '/api/services/:id/redeploy',
      target: { type: 'service', id: serviceA },
      status_code: 200,
    });
    expect(
      json<{ total: number }>(await list(users.root!.auth, `?actor_api_key_id=${busy.keyId}`)).total,
    ).toBe(3);

    const future = new Date(Date.now() + 60_000).toISOString();
    const past = new Date(Date.now() - 3_600_000).toISOString();
    expect(json<{ total: number }>(await list(users.root!.auth, `${byActor}&since=${future}`)).total).toBe(0);
    expect(
      json<{ total: number }>(await list(users.root!.auth, `${byActor}&since=${past}&until=${future}`)).total,
    ).toBe(3);
    expect(json<{ total: number }>(await list(users.root!.auth, `${byActor}&until=${past}`)).total).toBe(0);
  });

  it.each([
    ['?since=2030-01-02T00:00:00Z&until=2030-01-01T00:00:00Z', '/querystring/until'],
    ['?since=yesterday', '/querystring/since'],
    ['?target_type=widget', '/querystring/target_type'],
    ['?action=DROP%20TABLE', '/querystring/action'],
    ['?per_page=0', '/querystring/per_page'],
    ['?actor=me', '/querystring/actor'],
  ])('refuses %s with 400 naming %s', async (query, path) => {
    const response = await list(users.root!.auth, query);
    expect(response.statusCode).toBe(400);
    expect(JSON.stringify(json(response).errors)).toContain(path);
  });
});

describe('append-only, with retention', () => {
  it('the table refuses UPDATE and deleting recent rows', async () => {
    const row = await h.container.db.auditEvent.findFirstOrThrow();
    await expect(
      h.container.db.$executeRaw`UPDATE audit_events SET status_code = 200 WHERE id = ${row.id}`,
    ).rejects.toThrow(/append-only/);
    await expect(h.container.db.$executeRaw`DELETE FROM audit_events WHERE id = ${row.id}`).rejects.toThrow(
      /append-only/,
    );
  });

  it('retention deletes events older than AUDIT_RETENTION_DAYS and keeps the rest', async () => {
    const marker = randomUUID();
    const insert = (id: string, daysAgo: number) => h.container.db.$executeRaw`
      INSERT INTO audit_events (id, occurred_at, actor_type, method, route, action, status_code, source_address, request_id)
      VALUES (${id}, now() - make_interval(days => ${daysAgo}), 'anonymous', 'POST', '/api/x', 'x.create', 201, '127.0.0.1', ${marker})`;
    await insert(`old-${marker}`, 91);
    await insert(`kept-${marker}`, 89);
    const { db, sql } = createDatabase({
      url: TEST_DATABASE_URL,
      max: 1,
      keys: keyringFromEnvironment(process.env),
    });
    // A batch of one: the loop must go on until nothing old is left.
    const store = createAuditStore(db, sql);
    const retention = startAuditRetention({
      store: { deleteOlderThan: (cutoff) => store.deleteOlderThan(cutoff, 1) },
      days: 90,
      log: pino({ level: 'silent' }),
    });
    try {
      expect(await retention.runOnce()).toBeGreaterThanOrEqual(1);
    } finally {
      retention.stop();
      await db.$disconnect();
    }
    const left = await h.container.db.auditEvent.findMany({ where: { requestId: marker } });
    expect(left.map((r) => r.id)).toEqual([`kept-${marker}`]);
  });
});
