import { ROLES, type Role } from '@hostctl/domain';
import type { Principal } from './principal.js';

/**
 * Who may create and change which users (docs/auth.md#user-administration). The threat is a
 * customer's own admin (a stranger to us) widening its reach: naming another customer, clearing a
 * customer to become unscoped, or granting admin. So:
 * - only an unscoped admin creates unscoped users, changes anyone's customer, grants admin or
 *   raises anyone's role;
 * - a customer-scoped admin creates operators and viewers of its own customer, renames and lowers
 *   the roles of its own customer's operators and viewers, nothing else;
 * - nobody changes their own role or customer (a no-op that repeats the current value is fine).
 * Visibility (another customer's user is "not found") is enforced in the store's where clause; the
 * decisions here repeat it so that the rules can be table-tested without a database.
 */
export type UserAdminDecision =
  { allowed: true } | { allowed: false; reason: 'forbidden' | 'not_found'; detail: string };

type Actor = Pick<Principal, 'userId' | 'role' | 'customerId'>;

export interface UserFacts {
  id: string;
  role: Role;
  customerId: string | null;
}

/** `customerId` undefined leaves the customer as it is; null makes the user unscoped. */
export interface UserChange {
  role?: Role | undefined;
  customerId?: string | null | undefined;
}

const RANK: Record<Role, number> = { viewer: 0, operator: 1, admin: 2 };
const ALLOWED: UserAdminDecision = { allowed: true };
const deny = (detail: string): UserAdminDecision => ({ allowed: false, reason: 'forbidden', detail });

/** The roles an actor may hand out: every role for an unscoped admin, below admin for a scoped one. */
export function grantableRoles(actor: Pick<Principal, 'role' | 'customerId'>): readonly Role[] {
  if (actor.role !== 'admin') return [];
  return actor.customerId === null ? ROLES : ROLES.filter((role) => role !== 'admin');
}

/** Whether the actor may see (and so act on) this user at all: scoped admins see their customer's users. */
export function canSeeUser(
  actor: Pick<Principal, 'role' | 'customerId'>,
  target: Pick<UserFacts, 'customerId'>,
) {
  if (actor.role !== 'admin') return false;
  return actor.customerId === null || target.customerId === actor.customerId;
}

export function decideUserCreate(
  actor: Actor,
  input: { role: Role; customerId: string | null },
): UserAdminDecision {
  if (actor.role !== 'admin') return deny(`your role (${actor.role}) may not manage users`);
  if (actor.customerId === null) return ALLOWED;
  if (input.customerId !== actor.customerId)
    return deny('a customer-scoped admin creates users of its own customer only');
  if (!grantableRoles(actor).includes(input.role))
    return deny(`a customer-scoped admin may grant ${grantableRoles(actor).join(' or ')}, not ${input.role}`);
  return ALLOWED;
}

export function decideUserUpdate(actor: Actor, target: UserFacts, change: UserChange): UserAdminDecision {
  if (actor.role !== 'admin') return deny(`your role (${actor.role}) may not manage users`);
  if (!canSeeUser(actor, target))
    return { allowed: false, reason: 'not_found', detail: `user ${target.id} not found` };
  const changesRole = change.role !== undefined && change.role !== target.role;
  const changesCustomer = change.customerId !== undefined && change.customerId !== target.customerId;
  if (target.id === actor.userId && (changesRole || changesCustomer))
    return deny('you cannot change your own role or customer; ask another unscoped admin');
  if (actor.customerId === null) return ALLOWED;
  if (changesCustomer) return deny("only an unscoped admin changes a user's customer");
  const grantable = grantableRoles(actor);
  if (target.id !== actor.userId && !grantable.includes(target.role))
    return deny(`a customer-scoped admin cannot change a user whose role is ${target.role}`);
  if (changesRole && change.role !== undefined && RANK[change.role] > RANK[target.role])
    return deny("only an unscoped admin raises a user's role");
  return ALLOWED;
}

/**
 * Whose API keys an actor may revoke besides its own: any user's for an unscoped admin, the
 * operators' and viewers' of its customer for a scoped admin (the users it may manage), nobody's
 * for other roles. Mirrors decideUserUpdate so that "may act on the user" and "may act on the
 * user's keys" never disagree.
 */
export type KeyRevokeScope =
  | { kind: 'owner'; userId: string }
  | { kind: 'customer'; userId: string; customerId: string; roles: readonly Role[] }
  | { kind: 'any' };

export function keyRevokeScope(actor: Actor): KeyRevokeScope {
  if (actor.role !== 'admin') return { kind: 'owner', userId: actor.userId };
  if (actor.customerId === null) return { kind: 'any' };
  return {
    kind: 'customer',
    userId: actor.userId,
    customerId: actor.customerId,
    roles: grantableRoles(actor),
  };
}
