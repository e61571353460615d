import { Writable } from 'node:stream';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerErrorHandlers } from '../../plugins/errors.js';
import { registerRateLimit } from '../../plugins/rate-limit.js';
import { json } from '../../test-support/harness.js';
import {
  createAuthHarness,
  provision,
  seedKey,
  TEST_CALLBACK,
  TEST_ORIGIN,
  testAccount,
  type AuthHarness,
} from './test-support/auth-harness.js';
import { startDevIdpProcess, type DevIdpProcess } from './test-support/dev-idp-process.js';
import { signIn, startLogin } from './test-support/oidc-login.js';

const heidi = testAccount('heidi');
let heidiId: string;
let idp: DevIdpProcess;
let h: AuthHarness;
let session: string;

beforeAll(async () => {
  idp = await startDevIdpProcess({
    accounts: [heidi],
    redirectUris: [TEST_CALLBACK],
    postLogoutRedirectUris: [],
  });
  h = await createAuthHarness({ OIDC_ISSUER: idp.issuer });
  heidiId = (await provision(h.store, heidi, 'operator')).id;
  session = (await signIn(h.app, heidi)).session;
});
afterAll(async () => {
  await h?.close();
  await idp?.stop();
});

/** Fixed windows reset on the minute: keep a counted sequence from straddling two windows. */
async function awayFromWindowEdge(): Promise<void> {
  const into = Date.now() % 60_000;
  if (into > 50_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - into + 100));
}

describe('Origin check for cookie-authenticated requests', () => {
  const post = (headers: Record<string, string>) =>
    h.app.inject({
      method: 'POST',
      url: '/api/auth/api-keys',
      headers: { cookie: session, ...headers },
      payload: { name: 'origin test' },
    });

  it.each([
    ['a foreign Origin', { origin: 'https://evil.example' }],
    ['Origin null', { origin: 'null' }],
    ['our host on another port', { origin: 'http://127.0.0.1:1234' }],
    ['another scheme', { origin: 'https://127.0.0.1:39999' }],
    ['no Origin and Sec-Fetch-Site cross-site', { 'sec-fetch-site': 'cross-site' }],
    ['no Origin and Sec-Fetch-Site same-site', { 'sec-fetch-site': 'same-site' }],
  ])('refuses an unsafe request with %s (403 origin_rejected)', async (_label, headers) => {
    const response = await post(headers);
    expect(response.statusCode).toBe(403);
    expect(json(response)).toMatchObject({ code: 'origin_rejected', status: 403 });
  });

  it.each([
    ["PUBLIC_URL's origin", { origin: TEST_ORIGIN }],
    ['no Origin and Sec-Fetch-Site same-origin', { 'sec-fetch-site': 'same-origin' }],
    ['no Origin and no Sec-Fetch-Site (a non-browser client)', {}],
  ])('allows an unsafe request with %s', async (_label, headers) => {
    expect((await post(headers)).statusCode).toBe(201);
  });

  it('checks DELETE and logout too, and leaves the session usable after a refusal', async () => {
    const key = await seedKey(h.store, heidiId);
    const del = await h.app.inject({
      method: 'DELETE',
      url: `/api/auth/api-keys/${key.id}`,
      headers: { cookie: session, origin: 'https://evil.example' },
    });
    expect(del.statusCode).toBe(403);
    const out = await h.app.inject({
      method: 'POST',
      url: '/api/auth/logout',
      headers: { cookie: session, origin: 'https://evil.example' },
    });
    expect(out.statusCode).toBe(403);
    expect(
      (await h.app.inject({ method: 'GET', url: '/api/auth/me', headers: { cookie: session } })).statusCode,
    ).toBe(200);
  });

  it('does not check safe methods, but does check WebSocket upgrades', async () => {
    const get = await h.app.inject({
      method: 'GET',
      url: '/api/auth/me',
      headers: { cookie: session, origin: 'https://evil.example' },
    });
    expect(get.statusCode).toBe(200);
    const upgrade = (origin?: string) =>
      h.app.inject({
        method: 'GET',
        url: '/api/auth/me',
        headers: {
          cookie: session,
          connection: 'Upgrade',
          upgrade: 'websocket',
          ...(origin ? { origin } : {}),
        },
      });
    expect(json(await upgrade('https://evil.example'))).toMatchObject({ code: 'origin_rejected' });
    expect(json(await upgrade())).toMatchObject({ code: 'origin_rejected' });
  });

  it('does not check bearer-key requests, even with a session cookie alongside', async () => {
    const key = await seedKey(h.store, heidiId);
    const target = await seedKey(h.store, heidiId);
    const response = await h.app.inject({
      method: 'DELETE',
      url: `/api/auth/api-keys/${target.id}`,
      headers: { authorization: key.auth, cookie: session, origin: 'https://evil.example' },
    });
    expect(response.statusCode).toBe(204);
  });
});

describe('rate limits', () => {
  it('limits per API key across instances, with 429, Retry-After and a problem body', async () => {
    const a = await createAuthHarness({ OIDC_ISSUER: idp.issuer, RATE_LIMIT_PER_MINUTE: '5' });
    const b = await createAuthHarness({
      OIDC_ISSUER: idp.issuer,
      RATE_LIMIT_PER_MINUTE: '5',
      QUEUE_PREFIX: a.config.QUEUE_PREFIX,
    });
    try {
      const key = await seedKey(a.store, heidiId);
      const other = await seedKey(a.store, heidiId);
      const me = (app: typeof a.app, auth: string) =>
        app.inject({ method: 'GET', url: '/api/auth/me', headers: { authorization: auth } });
      await awayFromWindowEdge();
      for (const app of [a.app, b.app, a.app, b.app, a.app])
        expect((await me(app, key.auth)).statusCode).toBe(200);
      const limited = await me(b.app, key.auth);
      expect(limited.statusCode).toBe(429);
      expect(json(limited)).toMatchObject({ code: 'rate_limited', status: 429 });
      const retryAfter = Number(limited.headers['retry-after']);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      // Another credential has its own budget.
      expect((await me(a.app, other.auth)).statusCode).toBe(200);
      // Probes are never limited.
      expect((await a.app.inject({ method: 'GET', url: '/livez' })).statusCode).toBe(200);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('limits per session and per IP for anonymous callers', async () => {
    const limited = await createAuthHarness({ OIDC_ISSUER: idp.issuer, RATE_LIMIT_PER_MINUTE: '3' });
    try {
      const { session: cookie } = await signIn(limited.app, heidi);
      await awayFromWindowEdge();
      const statuses = async (headers: Record<string, string>) => {
        const out: number[] = [];
        for (let i = 0; i < 4; i++)
          out.push((await limited.app.inject({ method: 'GET', url: '/api/auth/me', headers })).statusCode);
        return out;
      };
      expect(await statuses({ cookie })).toEqual([200, 200, 200, 429]);
      expect(await statuses({})).toEqual([401, 401, 401, 429]);
    } finally {
      await limited.close();
    }
  });

  it('is stricter for the sign-in endpoints', async () => {
    const limited = await createAuthHarness({ OIDC_ISSUER: idp.issuer, RATE_LIMIT_LOGIN_PER_MINUTE: '2' });
    try {
      await awayFromWindowEdge();
      await startLogin(limited.app);
      await startLogin(limited.app);
      const third = await limited.app.inject({ method: 'GET', url: '/api/auth/login' });
      expect(third.statusCode).toBe(429);
      expect(third.headers['retry-after']).toBeDefined();
      expect(
        (await limited.app.inject({ method: 'GET', url: '/api/auth/callback?code=x&state=y' })).statusCode,
      ).toBe(429);
    } finally {
      await limited.close();
    }
  });

  it('blocks bearer requests from an IP after repeated failed key authentications', async () => {
    const limited = await createAuthHarness({
      OIDC_ISSUER: idp.issuer,
      RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: '3',
    });
    try {
      const good = await seedKey(limited.store, heidiId);
      const me = (headers: Record<string, string>) =>
        limited.app.inject({ method: 'GET', url: '/api/auth/me', headers });
      await awayFromWindowEdge();
      for (const auth of ['Bearer hsk_guess1', 'Bearer nope', 'Basic abc'])
        expect((await me({ authorization: auth })).statusCode).toBe(401);
      const blocked = await me({ authorization: good.auth });
      expect(blocked.statusCode).toBe(429);
      expect(json(blocked)).toMatchObject({ code: 'rate_limited' });
      // Browser sessions from the same address are not affected.
      const { session: cookie } = await signIn(limited.app, heidi);
      expect((await me({ cookie })).statusCode).toBe(200);
    } finally {
      await limited.close();
    }
  });

  it('fails open, with one warning, when Redis is unreachable', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write: (chunk: Buffer, _encoding, done) => (lines.push(chunk.toString()), done()),
    });
    const log: FastifyBaseLogger = pino({ level: 'warn' }, sink);
    const deadRedis = new Redis('redis://127.0.0.1:1', {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
    });
    deadRedis.on('error', () => undefined);
    const app = Fastify({ loggerInstance: log });
    registerErrorHandlers(app);
    registerRateLimit(app, {
      redis: deadRedis,
      prefix: 'dead',
      perMinute: 1,
      loginPerMinute: 1,
      authFailuresPerMinute: 1,
      log,
    });
    app.get('/api/ping', { config: { permission: 'public' } }, async () => ({ ok: true }));
    try {
      for (let i = 0; i < 3; i++)
        expect((await app.inject({ method: 'GET', url: '/api/ping' })).statusCode).toBe(200);
      const warnings = lines.filter((line) => line.includes('rate limiting skipped'));
      expect(warnings).toHaveLength(1);
    } finally {
      await app.close();
      deadRedis.disconnect();
    }
  });
});
