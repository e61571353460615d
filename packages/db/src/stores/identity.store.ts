import type { Db } from '../client.js';
import type { ApiKey, User } from '../generated/client.ts';

export type IdentityStore = ReturnType<typeof createIdentityStore>;

/** Users and their API keys: what authentication reads on every request. */
export function createIdentityStore(db: Db) {
  return {
    findUserById(id: string): Promise<User | null> {
      return db.user.findUnique({ where: { id } });
    },

    findApiKeyByDigest(digest: string): Promise<(ApiKey & { user: User }) | null> {
      return db.apiKey.findUnique({
        where: { digest },
        include: { user: true },
        relationLoadStrategy: 'join',
      });
    },

    /** At most one write a minute per key: a hot key must not turn every read into a write. */
    async touchApiKey(id: string, now: Date): Promise<void> {
      // The condition repeats the caller's staleness check so concurrent requests write once.
      await db.apiKey.updateMany({
        where: { id, OR: [{ lastUsedAt: null }, { lastUsedAt: { lt: new Date(now.getTime() - 60_000) } }] },
        data: { lastUsedAt: now },
      });
    },
  };
}
