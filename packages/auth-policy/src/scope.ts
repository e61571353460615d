import type { Principal } from './principal.js';

/**
 * The customer rows a principal may see. `all` for unscoped admins/operators; `customer` for any
 * customer-scoped user whatever the role; `none` for an unscoped viewer, who was never assigned
 * a customer and therefore sees nothing.
 */
export type CustomerScope = { kind: 'all' } | { kind: 'customer'; customerId: string } | { kind: 'none' };

export function customerScope(principal: Pick<Principal, 'role' | 'customerId'>): CustomerScope {
  if (principal.customerId !== null) return { kind: 'customer', customerId: principal.customerId };
  if (principal.role === 'viewer') return { kind: 'none' };
  return { kind: 'all' };
}

export function scopeAllows(scope: CustomerScope, customerId: string): boolean {
  switch (scope.kind) {
    case 'all':
      return true;
    case 'customer':
      return scope.customerId === customerId;
    case 'none':
      return false;
  }
}
