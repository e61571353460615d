import type { KeyRevokeScope } from '@hostctl/auth-policy';
import { quotaExceeded } from '@hostctl/domain';
import type { Db } from '../client.js';
import { CAP_TRANSACTION } from './count-cap-lock.js';
import { activeApiKeys, defaultPlanLimits, keyOwnerLockId, type KeyOwner } from './quota-counts.js';
import { customerLimits, lockCustomerQuota } from './quota-ledger.js';
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
     * Inserts a key unless its owner is at its `api_keys` quota (quota_exceeded, docs/quotas.md):
     * the key's customer (its limit, else its user's), or for an unscoped user's key limited to no
     * customer the user, held to the default plan's limit. The count and the insert run under the
     * owner's quota lock, so parallel creates cannot pass the count together.
     */
    async createWithinQuota(
      input: NewApiKey & {
        /** The API key minting this one: the new key expires no later and is revoked with it. */
        parentKeyId?: string | null;
      },
      now: Date,
    ): Promise<ApiKey | 'parent_revoked' | 'outlives_parent'> {
      const user = await db.user.findUniqueOrThrow({
        where: { id: input.userId },
        select: { customerId: true },
      });
      const customerId = input.customerId ?? user.customerId;
      const owner: KeyOwner = customerId
        ? { kind: 'customer', customerId }
        : { kind: 'user', userId: input.userId };
      // The limit before the lock: the locked section stays the count and the insert.
      const limit = (customerId ? await customerLimits(db, customerId) : await defaultPlanLimits(db))
        .api_keys;
      return db.$transaction(async (tx) => {
        await lockCustomerQuota(tx, keyOwnerLockId(owner));
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
        if (limit !== null) {
          const active = await activeApiKeys(tx, owner, now);
          if (active + 1 > limit)
            throw quotaExceeded({
              name: 'api_keys',
              limit,
              usage: active,
              requested: 1,
              customer_id: customerId,
            });
        }
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
