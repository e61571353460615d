import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json } from '../../test-support/harness.js';
import {
  createAuthHarness,
  provision,
  TEST_CALLBACK,
  TEST_PUBLIC_URL,
  testAccount,
  uniqueCustomer,
  type AuthHarness,
} from './test-support/auth-harness.js';
import { startDevIdpProcess, type DevIdpProcess } from './test-support/dev-idp-process.js';
import {
  authenticateAtIdp,
  finishLogin,
  joinCookies,
  setCookie,
  signIn,
  startLogin,
} from './test-support/oidc-login.js';

const operator = testAccount('operator');
const scoped = testAccount('scoped-viewer');
const stranger = testAccount('stranger');
const relinked = testAccount('relinked');
let idp: DevIdpProcess;
let h: AuthHarness;

beforeAll(async () => {
  idp = await startDevIdpProcess({
    accounts: [operator, scoped, stranger, relinked],
    redirectUris: [TEST_CALLBACK],
    postLogoutRedirectUris: [`${TEST_PUBLIC_URL}/`],
  });
  h = await createAuthHarness({ OIDC_ISSUER: idp.issuer });
  await provision(h.store, operator, 'operator');
  await provision(h.store, scoped, 'viewer', (await uniqueCustomer(h.store)).id);
});
afterAll(async () => {
  await h?.close();
  await idp?.stop();
});

describe('GET /api/auth/login', () => {
  it('redirects to the provider with PKCE S256, state and nonce, and sets a short-lived pre-login cookie', async () => {
    const { response, authorizationUrl } = await startLogin(h.app, { redirect: '/services?tab=keys' });
    const url = new URL(authorizationUrl);
    expect(url.origin + url.pathname).toBe(`${idp.issuer}/auth`);
    const params = Object.fromEntries(url.searchParams);
    expect(params).toMatchObject({
      response_type: 'code',
      client_id: 'hostctl-dashboard',
      redirect_uri: TEST_CALLBACK,
      code_challenge_method: 'S256',
      scope: 'openid email profile',
    });
    expect(params.code_challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(params.state!.length).toBeGreaterThanOrEqual(32);
    expect(params.nonce!.length).toBeGreaterThanOrEqual(32);
    const cookie = response.cookies.find((c) => c.name === 'hostctl_login');
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/', maxAge: 600 });
    expect(response.cookies.find((c) => c.name === 'session')).toBeUndefined();
  });
});

describe('GET /api/auth/callback', () => {
  it('creates a session, sets the session cookie and lands on the redirect target', async () => {
    const { session, response } = await signIn(h.app, operator, { redirect: '/services?tab=keys' });
    expect(response.headers.location).toBe(`${TEST_PUBLIC_URL}/services?tab=keys`);
    const cookie = response.cookies.find((c) => c.name === 'session')!;
    expect(cookie).toMatchObject({
      httpOnly: true,
      sameSite: 'Lax',
      path: '/',
      maxAge: h.config.SESSION_TTL_SECONDS,
    });
    expect(cookie.secure).toBeFalsy(); // this harness runs with COOKIE_SECURE=false over http
    // The cookie is encrypted and carries no readable identifiers.
    expect(decodeURIComponent(cookie.value)).not.toMatch(/operator|@|sid/);

    const me = await h.app.inject({ method: 'GET', url: '/api/auth/me', headers: { cookie: session } });
    expect(me.statusCode).toBe(200);
    expect(json(me)).toMatchObject({
      email: operator.email,
      name: operator.name,
      role: 'operator',
      customer_id: null,
    });
    expect(Object.keys(json(me)).sort()).toEqual([
      'created_at',
      'customer_id',
      'email',
      'id',
      'name',
      'role',
    ]);
  });

  it('links the pre-provisioned user by verified email once, then finds it by issuer and subject', async () => {
    await signIn(h.app, relinked).catch(() => undefined); // not provisioned yet: refused
    const user = await provision(h.store, relinked, 'viewer');
    const first = await signIn(h.app, relinked);
    const linked = await h.container.db.user.findUniqueOrThrow({ where: { id: user.id } });
    expect(linked.oidcIssuer).toBe(idp.issuer);
    expect(linked.oidcSubject).toMatch(/^dev-/);
    // Renaming the email locally does not break sign-in: identity is issuer + subject.
    await h.container.db.user.update({
      where: { id: user.id },
      data: { email: `renamed-${relinked.email}` },
    });
    const second = await signIn(h.app, relinked);
    const me = await h.app.inject({
      method: 'GET',
      url: '/api/auth/me',
      headers: { cookie: second.session },
    });
    expect(json(me)).toMatchObject({ id: user.id, email: `renamed-${relinked.email}` });
    expect(second.session).not.toBe(first.session);
  });

  it('carries role and customer scope from the database', async () => {
    const { session } = await signIn(h.app, scoped);
    const me = json(await h.app.inject({ method: 'GET', url: '/api/auth/me', headers: { cookie: session } }));
    expect(me).toMatchObject({ role: 'viewer', customer_id: expect.any(String) });
    const probe = await h.app.inject({
      method: 'GET',
      url: '/api/test-probe/read',
      headers: { cookie: session },
    });
    expect(json(probe)).toEqual({
      role: 'viewer',
      via: 'session',
      scope: `customer:${String(me.customer_id)}`,
    });
  });

  it('refuses an unknown user with 403 when OIDC_UNKNOWN_USERS=reject, and sets no session', async () => {
    const login = await startLogin(h.app);
    const callbackUrl = await authenticateAtIdp(login.authorizationUrl, stranger);
    const response = await finishLogin(h.app, callbackUrl, login.loginCookie);
    expect(response.statusCode).toBe(403);
    expect(response.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(json(response)).toMatchObject({ code: 'forbidden', status: 403 });
    expect(setCookie(response, 'session')).toBeUndefined();
  });

  it('refuses to link an email already linked to another identity', async () => {
    const other = testAccount('taken');
    const user = await provision(h.store, other, 'operator');
    await h.container.db.user.update({
      where: { id: user.id },
      data: { oidcIssuer: idp.issuer, oidcSubject: 'someone-else' },
    });
    const otherIdp = await startDevIdpProcess({
      accounts: [other],
      redirectUris: [TEST_CALLBACK],
      postLogoutRedirectUris: [],
    });
    const h2 = await createAuthHarness({ OIDC_ISSUER: otherIdp.issuer });
    try {
      const login = await startLogin(h2.app);
      const response = await finishLogin(
        h2.app,
        await authenticateAtIdp(login.authorizationUrl, other),
        login.loginCookie,
      );
      expect(response.statusCode).toBe(403);
      expect(json(response).detail).toMatch(/already linked/);
    } finally {
      await h2.close();
      await otherIdp.stop();
    }
  });

  it('creates a viewer without customer for an unknown user when OIDC_UNKNOWN_USERS=viewer', async () => {
    const h2 = await createAuthHarness({ OIDC_ISSUER: idp.issuer, OIDC_UNKNOWN_USERS: 'viewer' });
    try {
      const { session } = await signIn(h2.app, stranger);
      const me = json(
        await h2.app.inject({ method: 'GET', url: '/api/auth/me', headers: { cookie: session } }),
      );
      expect(me).toMatchObject({
        email: stranger.email,
        name: stranger.name,
        role: 'viewer',
        customer_id: null,
      });
      const probe = json(
        await h2.app.inject({ method: 'GET', url: '/api/test-probe/read', headers: { cookie: session } }),
      );
      expect(probe.scope).toBe('none');
    } finally {
      await h2.close();
    }
  });
});

describe('cookie attributes with the default configuration', () => {
  it('marks both cookies Secure and names them __Host- unless COOKIE_SECURE=false', async () => {
    const secure = await createAuthHarness({ OIDC_ISSUER: idp.issuer, COOKIE_SECURE: '' });
    try {
      expect(secure.config.COOKIE_SECURE).toBe(true);
      const { session, response, login } = await signIn(secure.app, operator);
      expect(login.response.cookies.find((c) => c.name === '__Host-hostctl_login')).toMatchObject({
        secure: true,
        httpOnly: true,
        sameSite: 'Lax',
        path: '/',
      });
      expect(response.cookies.find((c) => c.name === '__Host-session')).toMatchObject({
        secure: true,
        httpOnly: true,
        sameSite: 'Lax',
        path: '/',
      });
      const raw = String(
        ([] as string[])
          .concat(response.headers['set-cookie'] ?? [])
          .find((line) => line.startsWith('__Host-session=')),
      );
      expect(raw).toMatch(/; HttpOnly/);
      expect(raw).toMatch(/; Secure/);
      expect(raw).toMatch(/; SameSite=Lax/);
      expect(raw).toMatch(/; Path=\//);
      expect(joinCookies(session)).toMatch(/^__Host-session=/);
    } finally {
      await secure.close();
    }
  });
});
