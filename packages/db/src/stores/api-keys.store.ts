import type { KeyRevokeScope } from '@hostctl/auth-policy';
import type { Db } from '../client.js';
import { CAP_TRANSACTION } from './count-cap-lock.js';
import type { ApiKey, Prisma } from '../generated/client.ts';

export type ApiKeysStore = ReturnType<typeof createApiKeysStore>;

/** A key to insert, from the API or the operator CLI (limits: docs/auth.md#deploy-tokens). */
export interface NewApiKey {
  userId: string;
  name: string;
  digest: string;
  expiresAt: Date | null;
  serviceId?: string | null;
  customerId?: string | null;
  /** Empty: not limited by action. */
  actions?: string[];
}

/** Whose keys the caller may revoke (auth-policy keyRevokeScope decides it). */
export type RevokeScope = KeyRevokeScope;

/** The scope as a where clause: keys outside it are simply not found. */
function revocableBy(scope: RevokeScope): Prisma.ApiKeyWhereInput {
  switch (scope.kind) {
    case 'owner':
      return { userId: scope.userId };
    case 'customer':
      return {
        OR: [
          { userId: scope.userId },
          { user: { is: { customerId: scope.customerId, role: { in: [...scope.roles] } } } },
        ],
      };
    case 'any':
      return {};
  }
}

/** API key management. Authentication reads keys through the identity store, never through this one. */
export function createApiKeysStore(db: Db) {
  return {
    /**
     * Inserts a key unless the user already holds `max` active (unrevoked, unexpired) keys. The user
     * row is locked for the transaction so two concurrent requests cannot both pass the count.
     */
    async createWithinLimit(
      input: NewApiKey & {
        /** The API key minting this one: the new key expires no later and is revoked with it. */
        parentKeyId?: string | null;
      },
      max: number,
      now: Date,
    ): Promise<ApiKey | 'limit_reached' | 'parent_revoked' | 'outlives_parent'> {
      return db.$transaction(async (tx) => {
        await tx.$queryRaw`SELECT id FROM users WHERE id = ${input.userId} FOR UPDATE`;
        let expiresAt = input.expiresAt;
        if (input.parentKeyId) {
          // Locked as revoke locks it: a revoke either sees the new key or comes before it is made.
          const [parent] = await tx.$queryRaw<{ revokedAt: Date | null; expiresAt: Date | null }[]>`
            SELECT revoked_at AS "revokedAt", expires_at AS "expiresAt"
              FROM api_keys WHERE id = ${input.parentKeyId} FOR UPDATE`;
          if (!parent || parent.revokedAt !== null || (parent.expiresAt && parent.expiresAt <= now))
            return 'parent_revoked';
          if (parent.expiresAt && expiresAt && expiresAt > parent.expiresAt) return 'outlives_parent';
          expiresAt = expiresAt ?? parent.expiresAt;
        }
        const active = await tx.apiKey.count({
          where: {
            userId: input.userId,
            revokedAt: null,
            OR: [{ expiresAt: null }, { expiresAt: { gt: now } }],
          },
        });
        if (active >= max) return 'limit_reached';
        return tx.apiKey.create({ data: { ...input, expiresAt } });
      }, CAP_TRANSACTION);
    },

    /** The user's keys that were not revoked, expired ones included so their owner can see them. */
    listForUser(userId: string): Promise<ApiKey[]> {
      return db.apiKey.findMany({
        where: { userId, revokedAt: null },
        orderBy: [{ createdAt: 'desc' }, { id: 'asc' }],
      });
    },

    /**
     * Marks a key revoked, and every key it minted (and they minted) with it, in one transaction;
     * false when it does not exist, is already revoked, or is outside the scope.
     */
    async revoke(id: string, scope: RevokeScope, now: Date): Promise<boolean> {
      return db.$transaction(async (tx) => {
        const result = await tx.apiKey.updateMany({
          where: { AND: [{ id, revokedAt: null }, revocableBy(scope)] },
          data: { revokedAt: now },
        });
        if (result.count !== 1) return false;
        await tx.$executeRaw`
          WITH RECURSIVE minted AS (
            SELECT id FROM api_keys WHERE parent_key_id = ${id}
            UNION
            SELECT k.id FROM api_keys k JOIN minted m ON k.parent_key_id = m.id
          )
          UPDATE api_keys SET revoked_at = ${now}
           WHERE id IN (SELECT id FROM minted) AND revoked_at IS NULL`;
        return true;
      });
    },
  };
}
