import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import type { TestAccount } from './dev-idp-process.js';

/** Just enough of a browser's cookie handling for the provider's own cookies. */
export class CookieJar {
  private readonly cookies = new Map<string, string>();

  store(headers: Headers): void {
    for (const line of headers.getSetCookie()) {
      const pair = line.split(';')[0] ?? '';
      const at = pair.indexOf('=');
      const name = pair.slice(0, at).trim();
      const value = pair.slice(at + 1).trim();
      if (value === '' || /max-age=0|expires=thu, 01 jan 1970/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

/** `name=value` of a cookie the app set, exactly as sent (still URL-encoded), or undefined. */
export function setCookie(response: LightMyRequestResponse, name: string): string | undefined {
  const lines = ([] as string[]).concat(response.headers['set-cookie'] ?? []);
  const pair = lines
    .map((line) => line.split(';')[0] ?? '')
    .find((candidate) => candidate.startsWith(`${name}=`));
  return pair && pair !== `${name}=` ? pair : undefined;
}

/** A cookie of the app under either name (`__Host-` with COOKIE_SECURE, the bare name without). */
export function appCookie(response: LightMyRequestResponse, name: 'session' | 'hostctl_login') {
  return setCookie(response, `__Host-${name}`) ?? setCookie(response, name);
}

export function joinCookies(...cookies: (string | undefined)[]): string {
  return cookies.filter(Boolean).join('; ');
}

/** GET /api/auth/login as a browser would; returns the provider URL and the pre-login cookie. */
export async function startLogin(app: FastifyInstance, options: { redirect?: string; cookie?: string } = {}) {
  const query = options.redirect === undefined ? '' : `?redirect=${encodeURIComponent(options.redirect)}`;
  const response = await app.inject({
    method: 'GET',
    url: `/api/auth/login${query}`,
    headers: options.cookie ? { cookie: options.cookie } : {},
  });
  if (response.statusCode !== 302) throw new Error(`login answered ${response.statusCode}: ${response.body}`);
  return {
    response,
    authorizationUrl: String(response.headers.location),
    loginCookie: appCookie(response, 'hostctl_login'),
  };
}

/**
 * Follows the provider from the authorization URL through its login form, submitting the
 * account's credentials; returns the callback URL the provider redirects the browser to.
 */
export async function authenticateAtIdp(
  authorizationUrl: string,
  account: Pick<TestAccount, 'email' | 'password'>,
  jar = new CookieJar(),
) {
  let url = authorizationUrl;
  for (let hop = 0; hop < 10; hop++) {
    const response = await fetch(url, { redirect: 'manual', headers: { cookie: jar.header() } });
    jar.store(response.headers);
    if (response.status >= 300 && response.status < 400) {
      const next = new URL(response.headers.get('location') ?? '', url).href;
      if (new URL(next).pathname === '/api/auth/callback') return next;
      url = next;
      continue;
    }
    const interaction = /\/interaction\/([A-Za-z0-9_-]+)$/.exec(new URL(url).pathname);
    if (response.status !== 200 || !interaction)
      throw new Error(`provider answered ${response.status} at ${url}`);
    const submitted = await fetch(new URL(`/interaction/${interaction[1]}/login`, url), {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ email: account.email, password: account.password }).toString(),
    });
    jar.store(submitted.headers);
    if (submitted.status !== 303) throw new Error(`provider refused the credentials (${submitted.status})`);
    url = new URL(submitted.headers.get('location') ?? '', url).href;
  }
  throw new Error('too many redirects at the provider');
}

/** Hands the provider's callback URL to the app, with whatever cookies the browser holds. */
export function finishLogin(app: FastifyInstance, callbackUrl: string, cookie: string | undefined) {
  const url = new URL(callbackUrl);
  return app.inject({ method: 'GET', url: url.pathname + url.search, headers: cookie ? { cookie } : {} });
}

/** The whole browser sign-in; returns the session cookie (`[__Host-]session=…`) and the callback response. */
export async function signIn(
  app: FastifyInstance,
  account: Pick<TestAccount, 'email' | 'password'>,
  options: { redirect?: string; cookie?: string } = {},
) {
  const login = await startLogin(app, options);
  const callbackUrl = await authenticateAtIdp(login.authorizationUrl, account);
  const response = await finishLogin(app, callbackUrl, joinCookies(options.cookie, login.loginCookie));
  const session = appCookie(response, 'session');
  if (response.statusCode !== 302 || !session)
    throw new Error(`callback answered ${response.statusCode}: ${response.body}`);
  return { session, response, login, callbackUrl };
}
