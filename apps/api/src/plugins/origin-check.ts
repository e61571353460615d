import type { FastifyInstance } from 'fastify';
import { DomainError } from '@hostctl/domain';

const UNSAFE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const ALLOWED_FETCH_SITES = new Set(['same-origin', 'none']);

/**
 * CSRF defence for cookie-authenticated requests (SameSite=Lax is the first line). An unsafe
 * request or a WebSocket upgrade that carries the session cookie and no Authorization header must
 * come from PUBLIC_URL's origin:
 * - `Origin` present: it must equal PUBLIC_URL's origin exactly (`null` included in the refusals);
 * - `Origin` absent: browsers send Origin on every cross-origin unsafe request, so this is a
 *   same-origin request of an old browser or a non-browser client. Allowed unless `Sec-Fetch-Site`
 *   says `cross-site` or `same-site`. A WebSocket upgrade without Origin is refused.
 * Bearer-key requests are not checked: a browser never attaches them on its own.
 */
export function registerOriginCheck(
  app: FastifyInstance,
  /** Every name a session cookie may have (`__Host-session`, and the spec's `session` beside it). */
  options: { publicUrl: string; sessionCookies: string[] },
): void {
  const expected = new URL(options.publicUrl).origin;

  app.addHook('onRequest', async (request) => {
    if (request.headers.authorization !== undefined) return;
    if (options.sessionCookies.every((name) => request.cookies[name] === undefined)) return;
    const isUpgrade = request.headers.upgrade?.toLowerCase() === 'websocket';
    if (!isUpgrade && !UNSAFE_METHODS.has(request.method)) return;

    const origin = request.headers.origin;
    if (origin !== undefined) {
      if (origin !== expected) throw rejected(`requests from ${origin} may not use this site's session`);
      return;
    }
    if (isUpgrade) throw rejected('a WebSocket opened with the session cookie must send an Origin header');
    const site = request.headers['sec-fetch-site'];
    if (site !== undefined && !ALLOWED_FETCH_SITES.has(site)) {
      throw rejected("cross-site requests may not use this site's session");
    }
  });
}

function rejected(message: string): DomainError {
  return new DomainError('origin_rejected', message);
}
