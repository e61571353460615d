import type { Permission } from './permissions.js';
import type { Principal } from './principal.js';
import { customerScope, scopeAllows } from './scope.js';

/**
 * Deploy tokens (docs/auth.md#deploy-tokens): an API key may be limited to one service or one
 * customer, and to a set of actions. Limits only ever narrow what the key's owner may do: the
 * owner's role and customer scope are still checked on every request, and the limits on top.
 *
 * The action vocabulary is small on purpose, so that a CI configuration reads plainly:
 * - `read`: every read of services, deployments, logs, events, customers and templates;
 * - `deploy`: redeploy (and the other routes that start or undo a deployment: rollback, cancel);
 * - `operate`: start, stop, restart, one-off runs;
 * - `manage`: create, change and delete services, reveal secret variables, mint narrower keys;
 * - `exec`: open a terminal into a running service (docs/jobs.md#terminal). No other action implies
 *   it, and an API key reaches the terminal only with it (`needsExplicitKeyAction`).
 * Administration (users, customers, API keys but that minting, the audit log, nodes, quotas,
 * certificates) has no action: a limited key never administers anything, whatever its owner's role.
 */
export const KEY_ACTIONS = ['read', 'deploy', 'operate', 'manage', 'exec'] as const;
export type KeyAction = (typeof KEY_ACTIONS)[number];

export interface KeyLimits {
  /** The one service the key may touch; its customer is in `customerId` too. */
  serviceId: string | null;
  /** The one customer the key may touch (the service's customer for a service-limited key). */
  customerId: string | null;
  /** The actions the key may perform; null: every action its owner's role allows. */
  actions: readonly KeyAction[] | null;
}

/** What a route needs of a key: an action, nothing (the caller's own profile), or administration. */
export type KeyRequirement = { kind: 'action'; action: KeyAction } | { kind: 'self' } | { kind: 'admin' };

/**
 * The action each permission needs when the route declares none. `services:operate` covers
 * lifecycle actions, redeploys and variable changes, so those routes declare which one they are;
 * an undeclared one needs `manage`, the widest, so that a new route never opens up to narrower keys
 * by accident.
 */
const DEFAULT_REQUIREMENT: Record<Permission, KeyRequirement> = {
  'services:read': { kind: 'action', action: 'read' },
  'templates:read': { kind: 'action', action: 'read' },
  'customers:read': { kind: 'action', action: 'read' },
  'services:create': { kind: 'action', action: 'manage' },
  'services:operate': { kind: 'action', action: 'manage' },
  'services:delete': { kind: 'action', action: 'manage' },
  'profile:read': { kind: 'self' },
  'customers:manage': { kind: 'admin' },
  'users:manage': { kind: 'admin' },
  'api_keys:manage': { kind: 'admin' },
  'audit:read': { kind: 'admin' },
  // Nodes belong to no service or customer: no limited key reaches them.
  'nodes:read': { kind: 'admin' },
  'nodes:manage': { kind: 'admin' },
  'certificates:read': { kind: 'admin' },
  // Subscriptions belong to a customer: a customer-limited key reaches the list (narrowed to its
  // customer); the routes under /:id are nested resources that no limited key reaches.
  'notifications:read': { kind: 'action', action: 'read' },
  'notifications:manage': { kind: 'action', action: 'manage' },
  // What the operator sells: no limited key changes it, whatever its owner's role.
  'quotas:manage': { kind: 'admin' },
};

/** The actions a route of this permission may declare instead of the default. */
const DECLARABLE: Partial<Record<Permission, readonly KeyAction[]>> = {
  'services:operate': ['deploy', 'operate', 'manage', 'exec'],
  // Minting a narrower key (POST /api/auth/api-keys): a key with `manage` may, for its own scope.
  'api_keys:manage': ['manage'],
};

/**
 * The requirement of a route. Throws for a declared action its permission may not declare: a route
 * cannot make itself reachable by a read-only key by declaring `read` on a write permission.
 */
export function keyRequirement(permission: Permission, declared?: KeyAction): KeyRequirement {
  if (declared === undefined) return DEFAULT_REQUIREMENT[permission];
  if (!(DECLARABLE[permission] ?? []).includes(declared)) {
    throw new Error(`a route with permission ${permission} cannot declare the key action ${declared}`);
  }
  return { kind: 'action', action: declared };
}

/** The permissions that an action stands for: a key may only be given actions its owner may do. */
const ACTION_PERMISSIONS: Record<KeyAction, readonly Permission[]> = {
  read: ['services:read'],
  deploy: ['services:operate'],
  operate: ['services:operate'],
  manage: ['services:create', 'services:operate', 'services:delete'],
  exec: ['services:operate'],
};

export function actionPermissions(action: KeyAction): readonly Permission[] {
  return ACTION_PERMISSIONS[action];
}

/**
 * Whether the caller's credential carries an action: always for a session or an unlimited key
 * (its role decides), for a limited key only when the action is in its list. Handlers use it
 * where one route does more when it changes what a wider action guards (a rollback that brings
 * back other variables needs `manage`, though the route needs `deploy`).
 */
export function credentialAllows(principal: Pick<Principal, 'limits'>, action: KeyAction): boolean {
  const actions = principal.limits?.actions ?? null;
  return actions === null || actions.includes(action);
}

/**
 * Whether an API key carries an action it must hold by name: a key without limits (acting as its
 * owner) does not, so only a key minted with it reaches a terminal. Sessions: their role decides.
 */
export function credentialHoldsExplicitly(
  principal: Pick<Principal, 'via' | 'limits'>,
  action: KeyAction,
): boolean {
  if (principal.via !== 'api_key') return true;
  return principal.limits?.actions?.includes(action) ?? false;
}

export function isLimited(limits: KeyLimits): boolean {
  return limits.serviceId !== null || limits.customerId !== null || limits.actions !== null;
}

/**
 * The principal a limited key acts as: its owner, narrowed to the key's customer, so that every
 * customer-scoped read (lists included) sees that customer only. Returns null when the owner can no
 * longer see the key's customer (moved to another customer, or an unscoped viewer): such a key is
 * refused everything rather than acting in its owner's other scope.
 */
export function narrowToKey<P extends Pick<Principal, 'role' | 'customerId'>>(
  owner: P,
  limits: KeyLimits,
): (P & { limits: KeyLimits }) | null {
  if (limits.customerId === null) return { ...owner, limits };
  if (!scopeAllows(customerScope(owner), limits.customerId)) return null;
  return { ...owner, customerId: limits.customerId, limits };
}

/** What the route acts on, as far as the route's path tells: its outermost `/<resource>/:param`. */
export type KeyTarget =
  | { kind: 'none' }
  | { kind: 'service'; id: string }
  | { kind: 'customer'; id: string }
  /** A deployment, resolved to its service and customer (null: no such deployment). */
  | { kind: 'deployment'; id: string; owner: { serviceId: string; customerId: string } | null }
  /** A one-off run (docs/jobs.md), resolved to its service and customer like a deployment. */
  | { kind: 'run'; id: string; owner: { serviceId: string; customerId: string } | null }
  /**
   * A customer's variable group (docs/secrets.md#variable-groups), resolved to its customer (null:
   * no such group, or not looked up). Shared by the customer's services, so a service-limited key
   * never reaches one.
   */
  | { kind: 'variable_group'; id: string; owner: { customerId: string } | null }
  /** Users, API keys, nested or unknown resources: nothing a limited key may act on. */
  | { kind: 'other' };

/** The facts of a service target the check needs (null: no such live service). */
export interface ServiceFacts {
  customerId: string;
}

export type KeyDecision = { allowed: true } | { allowed: false; detail: string };

const ALLOWED: KeyDecision = { allowed: true };

/**
 * Whether a limited key may call a route. Every refusal is a 403 naming the limit, the same for a
 * target that does not exist and one that belongs to someone else, so the answer reveals nothing.
 * `serviceFacts` is looked up only for a customer-limited key acting on a service.
 */
export function decideKeyLimits(input: {
  limits: KeyLimits;
  permission: Permission;
  requirement: KeyRequirement;
  target: KeyTarget;
  /** The route applies a service limit to its own answer (the service list). */
  appliesServiceLimit: boolean;
  serviceFacts?: ServiceFacts | null;
}): KeyDecision {
  const { limits, requirement } = input;
  if (requirement.kind === 'admin') {
    return deny(`this API key is limited (${describeLimits(limits)}) and cannot administer anything`);
  }
  if (
    requirement.kind === 'action' &&
    limits.actions !== null &&
    !limits.actions.includes(requirement.action)
  ) {
    return deny(
      `this API key is limited to the actions ${limits.actions.join(', ')}; this route needs ${requirement.action}`,
    );
  }
  if (limits.serviceId !== null) return decideServiceLimit(limits.serviceId, input);
  if (limits.customerId !== null) return decideCustomerLimit(limits.customerId, input);
  return ALLOWED;
}

function decideServiceLimit(serviceId: string, input: Parameters<typeof decideKeyLimits>[0]): KeyDecision {
  const refused = deny(`this API key is limited to service ${serviceId}`);
  const { target, requirement } = input;
  switch (target.kind) {
    case 'service':
      return target.id === serviceId ? ALLOWED : refused;
    case 'deployment':
    case 'run':
      return target.owner?.serviceId === serviceId ? ALLOWED : refused;
    case 'variable_group':
      return refused;
    case 'none':
      // Only routes that hold no tenant data, or that narrow their answer to the service.
      if (requirement.kind === 'self' || input.appliesServiceLimit) return ALLOWED;
      return UNTENANTED.has(input.permission) ? ALLOWED : refused;
    case 'customer':
    case 'other':
      return refused;
  }
}

function decideCustomerLimit(customerId: string, input: Parameters<typeof decideKeyLimits>[0]): KeyDecision {
  const refused = deny(`this API key is limited to customer ${customerId}`);
  const { target } = input;
  switch (target.kind) {
    case 'service':
      return input.serviceFacts?.customerId === customerId ? ALLOWED : refused;
    case 'deployment':
    case 'run':
      return target.owner?.customerId === customerId ? ALLOWED : refused;
    case 'variable_group':
      return target.owner?.customerId === customerId ? ALLOWED : refused;
    case 'customer':
      return target.id === customerId ? ALLOWED : refused;
    case 'none':
      // The principal is narrowed to the customer (narrowToKey): lists show that customer only.
      return ALLOWED;
    case 'other':
      return refused;
  }
}

/** Permissions whose routes hold no customer's data: the template catalog is the same for everyone. */
const UNTENANTED: ReadonlySet<Permission> = new Set<Permission>(['templates:read', 'profile:read']);

export function describeLimits(limits: KeyLimits): string {
  const parts: string[] = [];
  if (limits.serviceId !== null) parts.push(`service ${limits.serviceId}`);
  else if (limits.customerId !== null) parts.push(`customer ${limits.customerId}`);
  if (limits.actions !== null) parts.push(`actions ${limits.actions.join(', ')}`);
  return parts.join('; ');
}

function deny(detail: string): KeyDecision {
  return { allowed: false, detail };
}
