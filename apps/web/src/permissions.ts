import { can, type Permission } from '@hostctl/auth-policy/permissions';
import type { Me } from '@hostctl/api-client';

/** What the caller may do, from the same role table the API enforces (the API still decides). */
export function allows(me: Pick<Me, 'role'>, permission: Permission): boolean {
  return can(me, permission);
}

/**
 * A platform-wide permission (nodes, certificates): the role grants it and the caller belongs to
 * no customer; the API refuses a customer-scoped caller whatever its role.
 */
export function platformWide(me: Pick<Me, 'role' | 'customer_id'>, permission: Permission): boolean {
  return me.customer_id === null && can(me, permission);
}
