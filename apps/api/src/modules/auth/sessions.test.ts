import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deriveCookieKey } from '@hostctl/auth-policy';
import { sessionHandle } from '../../auth/session-store.js';
import { json } from '../../test-support/harness.js';
import {
  createAuthHarness,
  provision,
  seedKey,
  TEST_CALLBACK,
  TEST_ORIGIN,
  TEST_PUBLIC_URL,
  testAccount,
  type AuthHarness,
} from './test-support/auth-harness.js';
import { startDevIdpProcess, type DevIdpProcess } from './test-support/dev-idp-process.js';
import { setCookie, signIn } from './test-support/oidc-login.js';

const alice = testAccount('alice');
let aliceId: string;
let idp: DevIdpProcess;
let h: AuthHarness;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  idp = await startDevIdpProcess({
    accounts: [alice],
    redirectUris: [TEST_CALLBACK],
    postLogoutRedirectUris: [`${TEST_PUBLIC_URL}/`],
  });
  h = await createAuthHarness({ OIDC_ISSUER: idp.issuer });
  aliceId = (await provision(h.store, alice, 'operator')).id;
});
afterAll(async () => {
  await h?.close();
  await idp?.stop();
});

const me = (cookie: string, app = h.app) =>
  app.inject({ method: 'GET', url: '/api/auth/me', headers: { cookie } });
const logout = (cookie: string) =>
  h.app.inject({ method: 'POST', url: '/api/auth/logout', headers: { cookie, origin: TEST_ORIGIN } });

describe('sessions', () => {
  it('keeps several sessions per user; logging out of one leaves the others active', async () => {
    const first = await signIn(h.app, alice);
    const second = await signIn(h.app, alice);
    expect(first.session).not.toBe(second.session);
    expect(
      (await h.container.redis.smembers(`${h.config.QUEUE_PREFIX}:auth:user-sessions:${aliceId}`)).length,
    ).toBeGreaterThanOrEqual(2);

    const out = await logout(first.session);
    expect(out.statusCode).toBe(200);
    const body = json<{ message: string; logout_url: string }>(out);
    expect(body.message).toMatch(/signed out/i);
    const logoutUrl = new URL(body.logout_url);
    expect(logoutUrl.origin + logoutUrl.pathname).toBe(`${idp.issuer}/session/end`);
    expect(logoutUrl.searchParams.get('post_logout_redirect_uri')).toBe(`${TEST_PUBLIC_URL}/`);
    expect(logoutUrl.searchParams.get('id_token_hint')).toMatch(/^ey/);
    // The response clears the cookie…
    const cleared = out.cookies.find((c) => c.name === 'session');
    expect(cleared?.value).toBe('');
    expect(cleared?.maxAge).toBe(0);
    // …and a copy of the old cookie is dead on the server, whatever the browser does.
    expect((await me(first.session)).statusCode).toBe(401);
    expect((await me(second.session)).statusCode).toBe(200);
  });

  it('slides the TTL on each use and expires an idle session', async () => {
    const short = await createAuthHarness({ OIDC_ISSUER: idp.issuer, SESSION_TTL_SECONDS: '2' });
    try {
      const { session } = await signIn(short.app, alice);
      // Used every 1.2 s for 3.6 s: longer than the 2 s TTL, yet still alive because each use resets it.
      for (let i = 0; i < 3; i++) {
        await sleep(1200);
        const response = await me(session, short.app);
        expect(response.statusCode).toBe(200);
        // Each use re-issues the cookie with a full Max-Age, matching the server-side TTL.
        expect(response.cookies.find((c) => c.name === 'session')?.maxAge).toBe(2);
      }
      await sleep(2300);
      const expired = await me(session, short.app);
      expect(expired.statusCode).toBe(401);
      // The dead cookie is cleared.
      expect(expired.cookies.find((c) => c.name === 'session')?.maxAge).toBe(0);
    } finally {
      await short.close();
    }
  });

  it('resets the Redis TTL to the configured value on each use', async () => {
    const { session } = await signIn(h.app, alice);
    const keys = await h.container.redis.keys(`${h.config.QUEUE_PREFIX}:auth:session:*`);
    await sleep(1100);
    const before = await Promise.all(keys.map((key) => h.container.redis.ttl(key)));
    expect((await me(session)).statusCode).toBe(200);
    const after = await Promise.all(keys.map((key) => h.container.redis.ttl(key)));
    expect(Math.max(...after)).toBe(h.config.SESSION_TTL_SECONDS);
    expect(Math.max(...before)).toBeLessThan(h.config.SESSION_TTL_SECONDS);
  });

  it("keeps a user's session index alive longer than any of the user's sessions", async () => {
    const { session } = await signIn(h.app, alice);
    const indexKey = `${h.config.QUEUE_PREFIX}:auth:user-sessions:${aliceId}`;
    for (let use = 0; use < 3; use++) {
      expect((await me(session)).statusCode).toBe(200);
      const sessionKeys = await h.container.redis.keys(`${h.config.QUEUE_PREFIX}:auth:session:*`);
      const sessionTtls = await Promise.all(sessionKeys.map((key) => h.container.redis.ttl(key)));
      expect(await h.container.redis.ttl(indexKey)).toBeGreaterThan(Math.max(...sessionTtls));
      await sleep(1100);
    }
  });

  it('issues a fresh session id at sign-in: a planted cookie never becomes the signed-in session', async () => {
    // An attacker-chosen id, encrypted with the real key as if it had been planted earlier.
    const planted = 'attacker-chosen-session-id';
    const plantedCookie = `session=${encodeURIComponent(h.app.encodeSecureSession(h.app.createSecureSession({ sid: planted }), 'session'))}`;
    expect((await me(plantedCookie)).statusCode).toBe(401);

    const { session } = await signIn(h.app, alice, { cookie: plantedCookie });
    expect(session).not.toBe(plantedCookie);
    expect(
      await h.container.redis.exists(`${h.config.QUEUE_PREFIX}:auth:session:${sessionHandle(planted)}`),
    ).toBe(0);
    expect((await me(session)).statusCode).toBe(200);
    expect((await me(plantedCookie)).statusCode).toBe(401);
  });

  it('ends the previous session of a browser that signs in again', async () => {
    const first = await signIn(h.app, alice);
    const second = await signIn(h.app, alice, { cookie: first.session });
    expect((await me(first.session)).statusCode).toBe(401);
    expect((await me(second.session)).statusCode).toBe(200);
  });

  it('never accepts the pre-login cookie as a session', async () => {
    const { login } = await signIn(h.app, alice);
    const asSession = login.loginCookie!.replace(/^hostctl_login=/, 'session=');
    expect((await me(asSession)).statusCode).toBe(401);
    // Different keys for the two cookies, both derived from SESSION_SECRET.
    expect(deriveCookieKey('x'.repeat(32), 'session').equals(deriveCookieKey('x'.repeat(32), 'login'))).toBe(
      false,
    );
  });

  it('applies a role downgrade to an existing session at once', async () => {
    const bob = testAccount('bob');
    const idp2 = await startDevIdpProcess({
      accounts: [bob],
      redirectUris: [TEST_CALLBACK],
      postLogoutRedirectUris: [],
    });
    const h2 = await createAuthHarness({ OIDC_ISSUER: idp2.issuer });
    try {
      const user = await provision(h2.store, bob, 'operator');
      const { session } = await signIn(h2.app, bob);
      const write = () =>
        h2.app.inject({
          method: 'POST',
          url: '/api/test-probe/write',
          headers: { cookie: session, origin: TEST_ORIGIN },
        });
      expect((await write()).statusCode).toBe(200);
      await h2.container.db.user.update({ where: { id: user.id }, data: { role: 'viewer' } });
      expect((await write()).statusCode).toBe(403);
      await h2.container.db.user.delete({ where: { id: user.id } });
      expect((await me(session, h2.app)).statusCode).toBe(401);
    } finally {
      await h2.close();
      await idp2.stop();
    }
  });

  it('refuses logout with an API key and without credentials', async () => {
    const key = await seedKey(h.store, aliceId);
    const withKey = await h.app.inject({
      method: 'POST',
      url: '/api/auth/logout',
      headers: { authorization: key.auth },
    });
    expect(withKey.statusCode).toBe(403);
    expect(json(withKey).detail).toMatch(/browser session/);
    const anonymous = await h.app.inject({ method: 'POST', url: '/api/auth/logout' });
    expect(anonymous.statusCode).toBe(401);
    expect(setCookie(anonymous, 'session')).toBeUndefined();
  });
});
