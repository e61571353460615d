import type { Role } from '@hostctl/domain';
import type { Db } from '../client.js';
import type { User } from '../generated/client.ts';

export type UsersStore = ReturnType<typeof createUsersStore>;

/** User administration (admins only); authentication reads users through the identity store. */
export function createUsersStore(db: Db) {
  return {
    async list(page: { page: number; perPage: number }): Promise<{ rows: User[]; total: number }> {
      const [rows, total] = await Promise.all([
        db.user.findMany({
          orderBy: [{ email: 'asc' }],
          skip: (page.page - 1) * page.perPage,
          take: page.perPage,
        }),
        db.user.count(),
      ]);
      return { rows, total };
    },

    findById(id: string): Promise<User | null> {
      return db.user.findUnique({ where: { id } });
    },

    create(input: { email: string; name: string; role: Role; customerId: string | null }): Promise<User> {
      return db.user.create({ data: { ...input, email: input.email.toLowerCase() } });
    },

    update(id: string, changes: { name?: string; role?: Role; customerId?: string | null }): Promise<User> {
      return db.user.update({ where: { id }, data: changes });
    },
  };
}
