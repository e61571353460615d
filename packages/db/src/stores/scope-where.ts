import type { CustomerScope } from '@hostctl/auth-policy';

/**
 * Tenancy in the where clause: another customer's rows are simply not found.
 * Returns null when the scope can see nothing, so callers answer "empty" without a query.
 */
export function customerWhere(scope: CustomerScope): { customerId?: string } | null {
  switch (scope.kind) {
    case 'all':
      return {};
    case 'customer':
      return { customerId: scope.customerId };
    case 'none':
      return null;
  }
}
