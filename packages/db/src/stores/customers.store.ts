import type { Db } from '../client.js';
import type { Customer } from '../generated/client.ts';

export type CustomersStore = ReturnType<typeof createCustomersStore>;

export function createCustomersStore(db: Db) {
  return {
    findById(id: string): Promise<Customer | null> {
      return db.customer.findUnique({ where: { id } });
    },
  };
}
