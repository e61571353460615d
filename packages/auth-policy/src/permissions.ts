import type { Role } from '@hostctl/domain';
import type { Principal } from './principal.js';

export const PERMISSIONS = [
  'services:read',
  'services:create',
  'services:operate',
  'services:delete',
  'templates:read',
  'customers:read',
  'customers:manage',
  'users:manage',
  'profile:read',
  'api_keys:manage',
  'audit:read',
  // Swarm nodes are platform-wide: the nodes service also refuses customer-scoped callers.
  'nodes:read',
  'nodes:manage',
  // The platform's own certificates (docs/tls.md): platform-wide like nodes.
  'certificates:read',
  // Outbound notification subscriptions (issue 15 part 4, docs/notifications.md).
  'notifications:read',
  'notifications:manage',
  // Quota plans and per-customer quotas (docs/quotas.md): admins only, and the service refuses
  // scoped admins, since a quota is what the operator sells to the customer.
  'quotas:manage',
] as const;
export type Permission = (typeof PERMISSIONS)[number];

/** Routes that anyone may call (login, callback, health probes) declare this instead. */
export const PUBLIC = 'public' as const;
export type RoutePermission = Permission | typeof PUBLIC;

const READ_ONLY: readonly Permission[] = [
  'services:read',
  'templates:read',
  'customers:read',
  'profile:read',
  'api_keys:manage',
  'notifications:read',
];

const GRANTS: Record<Role, ReadonlySet<Permission>> = {
  admin: new Set(PERMISSIONS),
  operator: new Set<Permission>([
    ...READ_ONLY,
    'services:create',
    'services:operate',
    'services:delete',
    'customers:manage',
    'nodes:read',
    'nodes:manage',
    'certificates:read',
    'notifications:manage',
  ]),
  viewer: new Set<Permission>(READ_ONLY),
};

export function can(principal: Pick<Principal, 'role'>, permission: Permission): boolean {
  return GRANTS[principal.role].has(permission);
}
