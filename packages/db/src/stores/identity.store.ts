import type { Db, SqlPool } from '../client.js';
import type { ApiKey, User } from '../generated/client.ts';

export type IdentityStore = ReturnType<typeof createIdentityStore>;

/** What authentication needs of a key: whether it still works, and whose it is. */
export type ApiKeyWithUser = Pick<
  ApiKey,
  'id' | 'expiresAt' | 'lastUsedAt' | 'revokedAt' | 'serviceId' | 'customerId' | 'actions'
> & { user: User };

const USER_COLUMNS = `u.id, u.email, u.name, u.role, u.customer_id AS "customerId",
  u.oidc_issuer AS "oidcIssuer", u.oidc_subject AS "oidcSubject",
  u.created_at AS "createdAt", u.updated_at AS "updatedAt"`;

/**
 * Users and their API keys: what authentication reads on every request. The two reads run on
 * every authenticated request, so they are one SQL statement each on the pg pool (not Prisma).
 */
export function createIdentityStore(db: Db, sql: SqlPool) {
  return {
    async findUserById(id: string): Promise<User | null> {
      const { rows } = await sql.query<User>({
        name: 'identity-user-by-id',
        text: `SELECT ${USER_COLUMNS} FROM users u WHERE u.id = $1`,
        values: [id],
      });
      return rows[0] ?? null;
    },

    async findApiKeyByDigest(digest: string): Promise<ApiKeyWithUser | null> {
      const { rows } = await sql.query<KeyRow>({
        name: 'identity-api-key-by-digest',
        text: `SELECT k.id AS "keyId", k.expires_at AS "expiresAt", k.last_used_at AS "lastUsedAt",
                      k.revoked_at AS "revokedAt", k.service_id AS "keyServiceId",
                      k.customer_id AS "keyCustomerId", k.actions AS "keyActions", ${USER_COLUMNS}
               FROM api_keys k JOIN users u ON u.id = k.user_id
               WHERE k.digest = $1`,
        values: [digest],
      });
      const row = rows[0];
      if (!row) return null;
      const { keyId, expiresAt, lastUsedAt, revokedAt, keyServiceId, keyCustomerId, keyActions, ...user } =
        row;
      return {
        id: keyId,
        expiresAt,
        lastUsedAt,
        revokedAt,
        serviceId: keyServiceId,
        customerId: keyCustomerId,
        actions: keyActions,
        user,
      };
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

type KeyRow = User & {
  keyId: string;
  keyServiceId: string | null;
  keyCustomerId: string | null;
  keyActions: string[];
} & Pick<ApiKey, 'expiresAt' | 'lastUsedAt' | 'revokedAt'>;
