import type { CustomerScope } from '@hostctl/auth-policy';
import type { Role } from '@hostctl/domain';
import type { Db } from '../client.js';
import type { User } from '../generated/client.ts';
import { customerWhere } from './scope-where.js';

export type UsersStore = ReturnType<typeof createUsersStore>;
export type UserChanges = { name?: string; role?: Role; customerId?: string | null };

/**
 * User administration; authentication reads users through the identity store. Every read and write
 * takes the caller's CustomerScope into its where clause, so a customer-scoped admin's queries
 * simply do not find another customer's users (or unscoped ones).
 */
export function createUsersStore(db: Db) {
  return {
    async list(
      scope: CustomerScope,
      page: { page: number; perPage: number },
    ): Promise<{ rows: User[]; total: number }> {
      const tenant = customerWhere(scope);
      if (tenant === null) return { rows: [], total: 0 };
      const [rows, total] = await Promise.all([
        db.user.findMany({
          where: tenant,
          orderBy: [{ email: 'asc' }, { id: 'asc' }],
          skip: (page.page - 1) * page.perPage,
          take: page.perPage,
        }),
        db.user.count({ where: tenant }),
      ]);
      return { rows, total };
    },

    create(input: { email: string; name: string; role: Role; customerId: string | null }): Promise<User> {
      return db.user.create({ data: { ...input, email: input.email.toLowerCase() } });
    },

    /**
     * Reads the user within the scope, lets `decide` check the change against the row as it is now
     * (it may throw) and writes it, all under a row lock: two concurrent edits cannot each pass a
     * check against a state the other is about to change. null when the user is not in scope.
     */
    async updateVisible(
      scope: CustomerScope,
      id: string,
      decide: (current: User) => Promise<UserChanges>,
    ): Promise<User | null> {
      const tenant = customerWhere(scope);
      if (tenant === null) return null;
      return db.$transaction(async (tx) => {
        await tx.$queryRaw`SELECT id FROM users WHERE id = ${id} FOR UPDATE`;
        const current = await tx.user.findFirst({ where: { AND: [tenant, { id }] } });
        if (!current) return null;
        const changes = await decide(current);
        return tx.user.update({ where: { id: current.id }, data: changes });
      });
    },
  };
}
