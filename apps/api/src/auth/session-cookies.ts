import secureSession, { type Session } from '@fastify/secure-session';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { deriveCookieKey } from '@hostctl/auth-policy';

declare module '@fastify/secure-session' {
  interface SessionData {
    /** Session cookie: the secret session id. */
    sid: string;
    /** Pre-login cookie: the random value a login's server-side state must match. */
    binding: string;
  }
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The short-lived pre-login cookie that binds an OIDC login to the browser that started it. */
    loginSession: Session;
    /** The spec's `session` cookie beside `__Host-session` (cookieNames), for API clients. */
    specSession?: Session;
  }
}

/**
 * `__Host-` names (issue 27): a browser accepts such a cookie only with Secure, Path=/ and no
 * Domain, from the host itself, so an app on a sibling host (a tenant's, under the apps domain)
 * can neither plant nor shadow one with `Domain=<parent>`. Before, a tenant app set
 * `session=<its own sealed session>; Domain=<apps domain>; Path=/api`, the browser sent it first,
 * and the victim was signed in as the attacker.
 *
 * The spec names the session cookie `session`, and API clients that follow it keep working: the
 * same sealed session is also set under that name (`spec`), and it authenticates a request only
 * when the request carries no `__Host-session` and does not come from a browser (no
 * `Sec-Fetch-Site`, which every current browser sends and no page can remove). A browser, the only
 * client a planted cookie can reach, is authenticated by the `__Host-` cookie alone. Under
 * COOKIE_SECURE=false (tests over plain http) the names are the spec's: a browser drops a
 * `__Host-` cookie without Secure.
 */
export interface CookieNames {
  session: string;
  login: string;
  /** The spec's `session`, set beside a `__Host-session` for API clients; absent when that is the name. */
  spec?: string;
}

export const SPEC_SESSION_COOKIE = 'session';

export function cookieNames(secure: boolean): CookieNames {
  return secure
    ? { session: '__Host-session', login: '__Host-hostctl_login', spec: SPEC_SESSION_COOKIE }
    : { session: SPEC_SESSION_COOKIE, login: 'hostctl_login' };
}
/** How long a started sign-in may take at the provider; also the TTL of its server-side state. */
export const LOGIN_TTL_SECONDS = 600;

const ENVELOPE_MAX_AGE_SECONDS = 400 * 24 * 3600;
const SID = 'sid';
const BINDING = 'binding';

/**
 * Both cookies are encrypted (@fastify/secure-session, XSalsa20-Poly1305) and hold only an opaque
 * random value: the session itself lives in Redis. The session cookie is re-issued on every use
 * (see refreshSessionCookie) so its Max-Age slides with the server-side TTL.
 */
export async function registerSessionCookies(
  app: FastifyInstance,
  options: { secret: string; secure: boolean; ttlSeconds: number },
): Promise<void> {
  const names = cookieNames(options.secure);
  const sessionCookie = {
    path: '/',
    httpOnly: true,
    secure: options.secure,
    sameSite: 'lax' as const,
    maxAge: options.ttlSeconds,
  };
  // The Redis TTL decides when a session ends. The envelope's own expiry is set out of the way
  // (400 days, the browsers' cap) so a client that keeps its first cookie is not cut off early.
  const sessionKey = deriveCookieKey(options.secret, 'session');
  await app.register(secureSession, [
    {
      sessionName: 'session',
      cookieName: names.session,
      key: sessionKey,
      expiry: ENVELOPE_MAX_AGE_SECONDS,
      cookie: sessionCookie,
    },
    ...(names.spec
      ? [
          {
            sessionName: 'specSession',
            cookieName: names.spec,
            key: sessionKey,
            expiry: ENVELOPE_MAX_AGE_SECONDS,
            cookie: sessionCookie,
          },
        ]
      : []),
    {
      sessionName: 'loginSession',
      cookieName: names.login,
      key: deriveCookieKey(options.secret, 'login'),
      expiry: LOGIN_TTL_SECONDS,
      // Lax still reaches the callback: the provider sends the browser back with a top-level GET.
      // Path=/ is what a `__Host-` cookie must have; it holds only a sealed random binding.
      cookie: {
        path: '/',
        httpOnly: true,
        secure: options.secure,
        sameSite: 'lax',
        maxAge: LOGIN_TTL_SECONDS,
      },
    },
  ]);
}

/**
 * How many cookies of this name the request carries. A browser sends one per (name, domain, path)
 * it holds, so more than one means a cookie was planted beside ours (a parent domain's or a longer
 * path's); the cookie parser keeps only the first, which is the one the planter controls.
 */
export function cookieCount(request: FastifyRequest, name: string): number {
  const header = request.headers.cookie;
  if (header === undefined) return 0;
  let count = 0;
  for (const pair of header.split(';')) {
    const at = pair.indexOf('=');
    if ((at === -1 ? pair : pair.slice(0, at)).trim() === name) count += 1;
  }
  return count;
}

const sidOf = (session: Session | undefined): string | null => {
  const value: unknown = session?.get(SID);
  return typeof value === 'string' && value.length > 0 ? value : null;
};

/** Whether the request comes from a browser: every current one sends Fetch Metadata, no page can drop it. */
const isBrowser = (request: FastifyRequest) => request.headers['sec-fetch-site'] !== undefined;

/**
 * The cookie name whose copies decide the request's session: the spec's `session` only for an API
 * client that sent no `__Host-session` (see cookieNames).
 */
export function sessionCookieInUse(request: FastifyRequest, names: CookieNames): string {
  return names.spec && !isBrowser(request) && cookieCount(request, names.session) === 0
    ? names.spec
    : names.session;
}

/** The secret session id from the request's session cookie, if it decrypted. */
export function readSessionSecret(request: FastifyRequest): string | null {
  // Apps built without the cookie plugin (some tests) have no session object at all.
  const primary = sidOf(request.session);
  if (primary || isBrowser(request)) return primary;
  return sidOf(request.specSession);
}

/** Replaces whatever the client sent with a fresh session id: nothing from before login survives. */
export function issueSessionCookie(request: FastifyRequest, secret: string): void {
  request.session.regenerate();
  request.session.set(SID, secret);
  request.specSession?.regenerate();
  request.specSession?.set(SID, secret);
}

/** Re-encrypts the same id with a fresh timestamp so the cookie's Max-Age restarts with the TTL. */
export function refreshSessionCookie(request: FastifyRequest): void {
  const secret = readSessionSecret(request);
  request.session.touch();
  // Both names stay set and alike, whichever one the client sent.
  if (secret) {
    request.session.set(SID, secret);
    request.specSession?.set(SID, secret);
  }
}

export function clearSessionCookie(request: FastifyRequest): void {
  (request.session as Session | undefined)?.delete();
  request.specSession?.delete();
}

/** Null also when two pre-login cookies arrive: a planted one must not bind someone else's login. */
export function readLoginBinding(request: FastifyRequest, names: Pick<CookieNames, 'login'>): string | null {
  if (cookieCount(request, names.login) > 1) return null;
  const value: unknown = (request.loginSession as Session | undefined)?.get(BINDING);
  return typeof value === 'string' && value.length > 0 ? value : null;
}

export function issueLoginCookie(request: FastifyRequest, binding: string): void {
  request.loginSession.set(BINDING, binding);
}
