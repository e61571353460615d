import { can, type Permission } from '@hostctl/auth-policy/permissions';
import type { Me } from '@hostctl/api-client';

/** What the caller may do, from the same role table the API enforces (the API still decides). */
export function allows(me: Pick<Me, 'role'>, permission: Permission): boolean {
  return can(me, permission);
}
