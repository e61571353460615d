import type { Role } from '@hostctl/domain';
import type { Db } from '../client.js';
import type { NewApiKey } from './api-keys.store.js';
import type { Customer, User } from '../generated/client.ts';

export type BootstrapStore = ReturnType<typeof createBootstrapStore>;

/** Operator-side writes used by the CLI and the seed: customers, users, and keys by email. */
export function createBootstrapStore(db: Db) {
  return {
    createCustomer(name: string): Promise<Customer> {
      return db.customer.create({ data: { name } });
    },

    ensureCustomer(name: string): Promise<Customer> {
      return db.customer.upsert({ where: { name }, create: { name }, update: {} });
    },

    createUser(input: { email: string; name: string; role: Role; customerId: string | null }): Promise<User> {
      return db.user.create({ data: { ...input, email: input.email.toLowerCase() } });
    },

    ensureUser(input: { email: string; name: string; role: Role; customerId: string | null }): Promise<User> {
      const email = input.email.toLowerCase();
      return db.user.upsert({
        where: { email },
        create: { ...input, email },
        update: { name: input.name, role: input.role, customerId: input.customerId },
      });
    },

    findUserByEmail(email: string): Promise<User | null> {
      return db.user.findUnique({ where: { email: email.toLowerCase() } });
    },

    /** Limits as docs/auth.md#deploy-tokens: a service-limited key carries its service's customer. */
    createApiKey(input: NewApiKey) {
      return db.apiKey.create({ data: input });
    },

    /** The customer of a live service, for a key limited to it (null: no such live service). */
    async serviceCustomer(serviceId: string): Promise<string | null> {
      const service = await db.service.findFirst({
        where: { id: serviceId, deletedAt: null },
        select: { customerId: true },
      });
      return service?.customerId ?? null;
    },

    async customerExists(customerId: string): Promise<boolean> {
      return (await db.customer.count({ where: { id: customerId } })) > 0;
    },
  };
}
