import { Type } from 'typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { can, PUBLIC, type Principal, type RoutePermission } from '@hostctl/auth-policy';
import { DomainError } from '@hostctl/domain';
import type { Authenticator } from '../auth/authenticator.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Every route declares what it needs; registerAccessControl refuses to boot without it. */
    permission?: RoutePermission;
  }
  interface FastifyRequest {
    principal: Principal | null;
  }
  interface FastifyInstance {
    /** Every route registered after access control, with what it requires: the authorization test's input. */
    routeCatalog: readonly RouteEntry[];
  }
}

export interface RouteEntry {
  method: string;
  url: string;
  permission: RoutePermission;
}

const NO_QUERY_PARAMETERS = Type.Object({}, { additionalProperties: false });

/**
 * Authentication and authorization for every route, decided by the route's declared permission.
 * Runs in onRequest, so a WebSocket upgrade is refused before the handshake.
 */
export function registerAccessControl(app: FastifyInstance, authenticator: Authenticator): void {
  app.decorateRequest('principal', null);
  const catalog: RouteEntry[] = [];
  app.decorate('routeCatalog', catalog);

  app.addHook('onRoute', (route) => {
    const permission = route.config?.permission;
    if (permission === undefined) {
      throw new Error(`route ${String(route.method)} ${route.url} declares no permission`);
    }
    for (const method of Array.isArray(route.method) ? route.method : [route.method]) {
      catalog.push({ method: String(method), url: route.url, permission });
    }
    if (permission !== PUBLIC && route.url.startsWith('/api/') && !route.schema?.response) {
      throw new Error(`route ${String(route.method)} ${route.url} declares no response schema`);
    }
    // A resource route without query parameters refuses any (400 naming it), as the list refuses
    // unknown ones: a typo such as `?folow=true` must not be silently ignored.
    if (permission !== PUBLIC && route.url.startsWith('/api/') && !route.schema?.querystring) {
      route.schema = { ...route.schema, querystring: NO_QUERY_PARAMETERS };
    }
  });

  app.addHook('onRequest', async (request) => {
    const permission = request.routeOptions.config.permission;
    if (permission === undefined || permission === PUBLIC) return;
    const principal = await authenticator.authenticate(request);
    request.principal = principal;
    if (!can(principal, permission)) {
      throw new DomainError('forbidden', `your role (${principal.role}) may not perform this action`);
    }
  });
}

/** The authenticated caller of a route that declared a permission. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new DomainError('unauthenticated', 'authentication required');
  return request.principal;
}
