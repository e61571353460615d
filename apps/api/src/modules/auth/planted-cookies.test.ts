import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json } from '../../test-support/harness.js';
import {
  createAuthHarness,
  provision,
  TEST_CALLBACK,
  TEST_PUBLIC_URL,
  testAccount,
  type AuthHarness,
} from './test-support/auth-harness.js';
import { startDevIdpProcess, type DevIdpProcess } from './test-support/dev-idp-process.js';
import {
  authenticateAtIdp,
  finishLogin,
  joinCookies,
  signIn,
  startLogin,
} from './test-support/oidc-login.js';

// Issue 27, class 6: a tenant's app on the same site planted a login. It answered
// `Set-Cookie: session=<the attacker's own sealed session>; Domain=<apps domain>; Path=/api`; the
// browser then sent two `session` cookies to the dashboard, the longer path first, the cookie
// parser kept the first, and the victim was signed in as the attacker. The cookies are now
// `__Host-` (a browser refuses those with Domain, without Secure or with another path), and a
// request carrying two session cookies is refused and clears ours.
const victim = testAccount('victim');
const attacker = testAccount('attacker');
let idp: DevIdpProcess;
let secure: AuthHarness;
let plain: AuthHarness;

beforeAll(async () => {
  idp = await startDevIdpProcess({
    accounts: [victim, attacker],
    redirectUris: [TEST_CALLBACK],
    postLogoutRedirectUris: [`${TEST_PUBLIC_URL}/`],
  });
  // The default configuration (COOKIE_SECURE=true), as production and the dev stack run.
  secure = await createAuthHarness({ OIDC_ISSUER: idp.issuer, COOKIE_SECURE: '' });
  // COOKIE_SECURE=false (tests over plain http): unprefixed names, duplicates still refused.
  plain = await createAuthHarness({ OIDC_ISSUER: idp.issuer });
  await provision(secure.store, victim, 'operator');
  await provision(secure.store, attacker, 'operator');
});
afterAll(async () => {
  await secure?.close();
  await plain?.close();
  await idp?.stop();
});

type Problem = { status: number; code: string; detail: string };
const me = (h: AuthHarness, cookie: string, headers: Record<string, string> = {}) =>
  h.app.inject({ method: 'GET', url: '/api/auth/me', headers: { cookie, ...headers } });
/** What every current browser adds to a same-origin fetch (Fetch Metadata). */
const FROM_BROWSER = { 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'cors' };
const setCookieLines = (response: { headers: Record<string, unknown> }) =>
  ([] as string[]).concat((response.headers['set-cookie'] as string | string[] | undefined) ?? []);
/** `name=value` with the name swapped: what a sibling host can set under the bare name. */
const renamed = (cookie: string, name: string) => `${name}=${cookie.slice(cookie.indexOf('=') + 1)}`;

describe('session and pre-login cookies are __Host- cookies', () => {
  it('sign-in sets __Host-session and __Host-hostctl_login: Secure, Path=/, no Domain', async () => {
    const { response, login } = await signIn(secure.app, victim);
    const session = setCookieLines(response).find((line) => line.startsWith('__Host-session='));
    const prelogin = setCookieLines(login.response).find((line) => line.startsWith('__Host-hostctl_login='));
    for (const line of [session, prelogin]) {
      expect(line).toMatch(/; Secure/);
      expect(line).toMatch(/; Path=\/(;|$)/);
      expect(line).toMatch(/; HttpOnly/);
      expect(line).not.toMatch(/domain=/i);
    }
  });

  it("sign-in also sets the spec's `session` cookie, host-only and Secure, for API clients", async () => {
    const { response } = await signIn(secure.app, victim);
    const spec = setCookieLines(response).find((line) => line.startsWith('session='));
    expect(spec).toMatch(/; Secure/);
    expect(spec).toMatch(/; HttpOnly/);
    expect(spec).toMatch(/; SameSite=Lax/);
    expect(spec).not.toMatch(/domain=/i);
    // A client that keeps only the spec's cookie (no browser) is signed in by it.
    const alone = me(secure, spec!.slice(0, spec!.indexOf(';')));
    expect(json<{ email: string }>(await alone).email).toBe(victim.email);
  });

  it("from a browser, a bare `session` cookie (what a tenant's app can plant with Domain=) authenticates nobody", async () => {
    const attackers = await signIn(secure.app, attacker);
    const planted = renamed(attackers.session, 'session');
    expect((await me(secure, planted, FROM_BROWSER)).statusCode).toBe(401);
    // Beside the victim's real cookies, and sent first as a longer path would be: the victim stays the victim.
    const victims = await signIn(secure.app, victim);
    const victimsSpec = renamed(victims.session, 'session');
    for (const cookie of [
      joinCookies(planted, victims.session),
      joinCookies(planted, victimsSpec, victims.session),
    ]) {
      const response = await me(secure, cookie, FROM_BROWSER);
      expect(response.statusCode).toBe(200);
      expect(json<{ email: string }>(response).email).toBe(victim.email);
    }
  });
});

describe('a request with two session cookies is refused and ours is cleared', () => {
  it.each([
    ['COOKIE_SECURE=true', () => secure, '__Host-session'],
    ['COOKIE_SECURE=false', () => plain, 'session'],
  ])('%s: the attacker-first pair → 401 problem clearing the cookie', async (_, harness, name) => {
    const h = harness();
    const attackers = await signIn(h.app, attacker);
    const victims = await signIn(h.app, victim);
    expect(attackers.session.startsWith(`${name}=`)).toBe(true);

    const response = await me(h, joinCookies(attackers.session, victims.session));
    expect(response.statusCode).toBe(401);
    expect(response.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(json<Problem>(response).detail).toMatch(/more than one session cookie/);
    const cleared = response.cookies.find((cookie) => cookie.name === name);
    expect(cleared?.value).toBe('');
    expect(cleared?.path).toBe('/');
    // The dashboard's way out: with the cleared cookie gone, its next sign-in works.
    const again = await signIn(h.app, victim);
    const recovered = await me(h, again.session);
    expect(json<{ email: string }>(recovered).email).toBe(victim.email);
  });

  it("two pre-login cookies at the callback: the attacker's login is not completed in the victim's browser", async () => {
    // Login CSRF: the attacker starts a sign-in, completes it at the provider as themself, plants
    // their pre-login cookie in the victim's browser and sends it to the callback URL.
    const attackers = await startLogin(plain.app);
    const callbackUrl = await authenticateAtIdp(attackers.authorizationUrl, attacker);
    const victims = await startLogin(plain.app);
    const response = await finishLogin(
      plain.app,
      callbackUrl,
      joinCookies(attackers.loginCookie, victims.loginCookie),
    );
    expect(response.statusCode).toBe(400);
    expect(setCookieLines(response).some((line) => /^session=[^;]/.test(line))).toBe(false);
  });
});
