import type { CustomerScope } from '@hostctl/auth-policy';
import type { Db } from '../client.js';
import type { Customer } from '../generated/client.ts';

export type CustomersStore = ReturnType<typeof createCustomersStore>;

export function createCustomersStore(db: Db) {
  /** A scoped user sees only its own customer; an unscoped viewer sees none. */
  const where = (scope: CustomerScope) =>
    scope.kind === 'all' ? {} : scope.kind === 'customer' ? { id: scope.customerId } : null;

  return {
    findById(id: string): Promise<Customer | null> {
      return db.customer.findUnique({ where: { id } });
    },

    async findVisible(scope: CustomerScope, id: string): Promise<Customer | null> {
      const tenant = where(scope);
      // AND, not a spread: the scope's own `id` condition must not be overwritten by the lookup's.
      return tenant === null ? null : db.customer.findFirst({ where: { AND: [tenant, { id }] } });
    },

    async list(
      scope: CustomerScope,
      page: { page: number; perPage: number },
    ): Promise<{ rows: Customer[]; total: number }> {
      const tenant = where(scope);
      if (tenant === null) return { rows: [], total: 0 };
      const [rows, total] = await Promise.all([
        db.customer.findMany({
          where: tenant,
          orderBy: [{ name: 'asc' }, { id: 'asc' }],
          skip: (page.page - 1) * page.perPage,
          take: page.perPage,
        }),
        db.customer.count({ where: tenant }),
      ]);
      return { rows, total };
    },

    create(name: string): Promise<Customer> {
      return db.customer.create({ data: { name } });
    },
  };
}
