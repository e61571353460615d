import { Type } from 'typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  can,
  keyRequirement,
  PUBLIC,
  type KeyAction,
  type Principal,
  type RoutePermission,
} from '@hostctl/auth-policy';
import { DomainError } from '@hostctl/domain';
import type { Authenticator } from '../auth/authenticator.js';
import type { KeyLimitCheck } from './key-limits.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Every route declares what it needs; registerAccessControl refuses to boot without it. */
    permission?: RoutePermission;
    /**
     * The deploy-token action a `services:operate` route is (docs/auth.md#deploy-tokens): `deploy`,
     * `operate` or `manage` (the default). Other permissions map to their action by themselves.
     */
    keyAction?: KeyAction;
    /** The handler narrows its answer to a service-limited key's service (the service list). */
    appliesServiceLimit?: boolean;
    /** The audit action name, when the default from method and path does not say it (docs/audit.md). */
    audit?: string;
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
  keyAction?: KeyAction;
}

const NO_QUERY_PARAMETERS = Type.Object({}, { additionalProperties: false });

/**
 * Authentication and authorization for every route, decided by the route's declared permission.
 * Runs in onRequest, so a WebSocket upgrade is refused before the handshake.
 */
export function registerAccessControl(
  app: FastifyInstance,
  authenticator: Authenticator,
  keyLimits: KeyLimitCheck,
): void {
  app.decorateRequest('principal', null);
  const catalog: RouteEntry[] = [];
  app.decorate('routeCatalog', catalog);

  app.addHook('onRoute', (route) => {
    const permission = route.config?.permission;
    if (permission === undefined) {
      throw new Error(`route ${String(route.method)} ${route.url} declares no permission`);
    }
    const keyAction = route.config?.keyAction;
    // Throws for an action the permission may not declare (a write route declaring `read`).
    if (permission !== PUBLIC) keyRequirement(permission, keyAction);
    for (const method of Array.isArray(route.method) ? route.method : [route.method]) {
      catalog.push({
        method: String(method),
        url: route.url,
        permission,
        ...(keyAction ? { keyAction } : {}),
      });
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
    // A deploy token: its limits narrow the owner's role and scope further.
    if (principal.limits) {
      await keyLimits.enforce(request, principal, permission, request.routeOptions.config.keyAction);
    }
  });
}

/** The authenticated caller of a route that declared a permission. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new DomainError('unauthenticated', 'authentication required');
  return request.principal;
}
