import { randomPKCECodeVerifier } from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json } from '../../test-support/harness.js';
import { assertAuthConfig } from './auth.module.js';
import {
  createAuthHarness,
  provision,
  TEST_CALLBACK,
  TEST_PUBLIC_URL,
  testAccount,
  type AuthHarness,
} from './test-support/auth-harness.js';
import { freePort } from '@hostctl/testing';
import { startDevIdpProcess, type DevIdpProcess } from './test-support/dev-idp-process.js';
import {
  authenticateAtIdp,
  CookieJar,
  finishLogin,
  joinCookies,
  setCookie,
  startLogin,
} from './test-support/oidc-login.js';

const carol = testAccount('carol');
let idp: DevIdpProcess;
let h: AuthHarness;

beforeAll(async () => {
  idp = await startDevIdpProcess({
    accounts: [carol],
    redirectUris: [TEST_CALLBACK],
    postLogoutRedirectUris: [],
  });
  h = await createAuthHarness({ OIDC_ISSUER: idp.issuer });
  await provision(h.store, carol, 'viewer');
});
afterAll(async () => {
  await h?.close();
  await idp?.stop();
});

/** Starts a login and authenticates at the provider; the callback is left to the test. */
async function pendingCallback(cookie?: string) {
  const login = await startLogin(h.app, cookie ? { cookie } : {});
  const callbackUrl = await authenticateAtIdp(login.authorizationUrl, carol);
  const state = new URL(login.authorizationUrl).searchParams.get('state')!;
  return { ...login, callbackUrl, state, loginKey: `${h.config.QUEUE_PREFIX}:auth:login:${state}` };
}

function expectRefused(response: Awaited<ReturnType<typeof finishLogin>>, detail: RegExp) {
  expect(response.statusCode).toBe(400);
  expect(json(response)).toMatchObject({ code: 'validation_failed', status: 400 });
  expect(json(response).detail).toMatch(detail);
  expect(setCookie(response, 'session')).toBeUndefined();
}

describe('callback failures leave no session', () => {
  it('refuses a replayed callback', async () => {
    const pending = await pendingCallback();
    expect((await finishLogin(h.app, pending.callbackUrl, pending.loginCookie)).statusCode).toBe(302);
    expectRefused(await finishLogin(h.app, pending.callbackUrl, pending.loginCookie), /already completed/);
  });

  it('refuses a callback without the pre-login cookie', async () => {
    const pending = await pendingCallback();
    expectRefused(await finishLogin(h.app, pending.callbackUrl, undefined), /pre-login cookie/);
  });

  it("refuses a callback carrying another browser's pre-login cookie, without burning the real one", async () => {
    const pending = await pendingCallback();
    const other = await startLogin(h.app);
    expectRefused(await finishLogin(h.app, pending.callbackUrl, other.loginCookie), /another browser/);
    expect((await finishLogin(h.app, pending.callbackUrl, pending.loginCookie)).statusCode).toBe(302);
  });

  it('refuses an unknown or altered state', async () => {
    const pending = await pendingCallback();
    const altered = new URL(pending.callbackUrl);
    altered.searchParams.set('state', `${pending.state}x`);
    expectRefused(await finishLogin(h.app, altered.href, pending.loginCookie), /unknown/);
    const missing = new URL(pending.callbackUrl);
    missing.searchParams.delete('state');
    expectRefused(await finishLogin(h.app, missing.href, pending.loginCookie), /no state/);
  });

  it('refuses an ID token whose nonce does not match the one stored for the login', async () => {
    const pending = await pendingCallback();
    const stored = JSON.parse((await h.container.redis.get(pending.loginKey))!) as Record<string, string>;
    await h.container.redis.set(
      pending.loginKey,
      JSON.stringify({ ...stored, nonce: 'not-the-nonce-sent-to-the-provider' }),
      'EX',
      60,
    );
    expectRefused(await finishLogin(h.app, pending.callbackUrl, pending.loginCookie), /nonce/);
  });

  it('refuses a code redeemed with the wrong PKCE verifier (the provider rejects the exchange)', async () => {
    const pending = await pendingCallback();
    const stored = JSON.parse((await h.container.redis.get(pending.loginKey))!) as Record<string, string>;
    await h.container.redis.set(
      pending.loginKey,
      JSON.stringify({ ...stored, codeVerifier: randomPKCECodeVerifier() }),
      'EX',
      60,
    );
    expectRefused(await finishLogin(h.app, pending.callbackUrl, pending.loginCookie), /invalid_grant/);
  });

  it('refuses a code from one login presented with the state of another (PKCE binds the code)', async () => {
    const first = await pendingCallback();
    const second = await pendingCallback(first.loginCookie);
    const swapped = new URL(first.callbackUrl);
    swapped.searchParams.set('state', second.state);
    expectRefused(await finishLogin(h.app, swapped.href, first.loginCookie), /invalid_grant|nonce/);
  });

  it('reports a sign-in cancelled at the provider', async () => {
    const login = await startLogin(h.app);
    const jar = new CookieJar();
    let response = await fetch(login.authorizationUrl, { redirect: 'manual' });
    jar.store(response.headers);
    const interaction = new URL(response.headers.get('location')!, login.authorizationUrl);
    response = await fetch(new URL(`${interaction.pathname}/abort`, interaction), {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: jar.header() },
    });
    jar.store(response.headers);
    response = await fetch(new URL(response.headers.get('location')!, interaction), {
      redirect: 'manual',
      headers: { cookie: jar.header() },
    });
    const callbackUrl = response.headers.get('location')!;
    expect(callbackUrl).toContain('error=access_denied');
    expectRefused(await finishLogin(h.app, callbackUrl, login.loginCookie), /access_denied/);
  });
});

describe('redirect targets', () => {
  it.each([
    ['//evil.example/x'],
    ['https://evil.example/'],
    ['http://127.0.0.1:39999/x'],
    ['/\\evil.example'],
    ['/\t/evil.example'],
    ['/ok\r\nSet-Cookie: x=1'],
    ['javascript:alert(1)'],
    ['evil.example'],
    // Resolve-then-compare variants: each of these is on our origin as a string prefix or after a
    // naive check, but sends the browser elsewhere once resolved.
    ['/..//evil.example/x'],
    ['/.//evil.example/x'],
    ['/./..//evil.example/x'],
    ['/%2f%2fevil.example/x'],
    ['/%2F/evil.example'],
    ['/%5cevil.example'],
    ['\\evil.example'],
    ['/\\evil.example'],
    ['\t//evil.example'],
    ['/\n/evil.example'],
    ['/\u00a0/evil.example'],
    ['/\u200b/evil.example'],
    ['/\u3000/evil.example'],
    ['http:evil.example'],
    ['https:evil.example'],
    ['http://evil.example@127.0.0.1:3000/'],
    [`${TEST_PUBLIC_URL.replace('http:', 'https:')}/x`],
    [`${TEST_PUBLIC_URL}@evil.example/`],
    [`http://user:pass@${new URL(TEST_PUBLIC_URL).host}/x`],
    ['http://evil。example/'],
    ['//evil.example\\@127.0.0.1/'],
    ['data:text/html,<script>alert(1)</script>'],
    // Absolute URLs, even of our own origin, are refused: a target is a path.
    [`${TEST_PUBLIC_URL}/services`],
    ['services/relative'],
  ])('refuses %j with 400 before contacting the provider', async (target) => {
    const response = await h.app.inject({
      method: 'GET',
      url: `/api/auth/login?redirect=${encodeURIComponent(target)}`,
    });
    expect(response.statusCode).toBe(400);
    expect(json(response)).toMatchObject({ code: 'validation_failed' });
    expect(json<{ errors: { path: string }[] }>(response).errors[0]?.path).toBe('/querystring/redirect');
    expect(response.headers.location).toBeUndefined();
  });

  it.each([
    [undefined, '/'],
    ['/', '/'],
    ['/services/abc?tab=logs#top', '/services/abc?tab=logs#top'],
    // Same origin once resolved: normalised to path + query + fragment on PUBLIC_URL.
    ['/a/../services/x', '/services/x'],
    ['/services/%E2%9C%93?q=%C3%A9', '/services/%E2%9C%93?q=%C3%A9'],
  ])('accepts %j and lands on it after sign-in', async (target, expected) => {
    const login = await startLogin(h.app, target === undefined ? {} : { redirect: target });
    const response = await finishLogin(
      h.app,
      await authenticateAtIdp(login.authorizationUrl, carol),
      login.loginCookie,
    );
    expect(response.statusCode).toBe(302);
    expect(response.headers.location).toBe(`${TEST_PUBLIC_URL}${expected}`);
  });
});

describe('provider availability', () => {
  it('answers 503 while the provider is down and signs in once it is up (lazy discovery)', async () => {
    const port = await freePort();
    const late = await createAuthHarness({ OIDC_ISSUER: `http://127.0.0.1:${port}` });
    // Identity is issuer + subject: a new issuer means a new user, linked by email on first sign-in.
    const dave = testAccount('dave');
    await provision(late.store, dave, 'viewer');
    let lateIdp: DevIdpProcess | undefined;
    try {
      const down = await late.app.inject({ method: 'GET', url: '/api/auth/login' });
      expect(down.statusCode).toBe(503);
      expect(down.headers['retry-after']).toBe('5');
      expect(json(down)).toMatchObject({ code: 'dependency_unavailable' });
      // Everything else keeps working meanwhile.
      expect((await late.app.inject({ method: 'GET', url: '/api/auth/me' })).statusCode).toBe(401);

      lateIdp = await startDevIdpProcess({
        accounts: [dave],
        redirectUris: [TEST_CALLBACK],
        postLogoutRedirectUris: [],
        port,
      });
      const login = await startLogin(late.app);
      const response = await finishLogin(
        late.app,
        await authenticateAtIdp(login.authorizationUrl, dave),
        joinCookies(login.loginCookie),
      );
      expect(response.statusCode).toBe(302);
      expect(setCookie(response, 'session')).toBeDefined();
    } finally {
      await late.close();
      await lateIdp?.stop();
    }
  });

  it('refuses an http:// issuer in production at start-up', () => {
    const production = { NODE_ENV: 'production', PUBLIC_URL: 'https://panel.example' } as const;
    expect(() => assertAuthConfig({ ...production, OIDC_ISSUER: 'http://idp.example' })).toThrow(/https/);
    expect(() => assertAuthConfig({ ...production, OIDC_ISSUER: 'https://idp.example' })).not.toThrow();
    expect(() =>
      assertAuthConfig({ ...production, NODE_ENV: 'development', OIDC_ISSUER: 'http://127.0.0.1:3100' }),
    ).not.toThrow();
  });
});
