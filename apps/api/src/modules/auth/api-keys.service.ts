import { generateApiKey, keyRevokeScope, type Principal } from '@hostctl/auth-policy';
import {
  toDomainError,
  type ApiKey,
  type ApiKeysStore,
  type CustomersStore,
  type KeyTargetsStore,
} from '@hostctl/db';
import { DomainError, validationError } from '@hostctl/domain';
import { parseTimestamp } from '../../http/input-bounds.js';
import type { ApiKeyListItem, CreateApiKeyBody } from './auth.schemas.js';
import { decideKeyLimitsAtCreation } from './key-limits-at-creation.js';
import { boundByMinter } from './key-minting.js';

export type ApiKeysService = ReturnType<typeof createApiKeysService>;

/** API keys act as their user: the key is shown once, only its SHA-256 digest is stored. */
export function createApiKeysService(deps: {
  store: ApiKeysStore;
  services: Pick<KeyTargetsStore, 'serviceOwner'>;
  customers: Pick<CustomersStore, 'findVisible'>;
  now?: () => Date;
}) {
  const now = deps.now ?? (() => new Date());
  const db = async <T>(run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (error) {
      throw toDomainError(error);
    }
  };

  return {
    async create(principal: Principal, body: CreateApiKeyBody) {
      // A key mints only narrower keys, tied to it: a leaked key cannot widen itself, and what it
      // minted never outlives its revocation or expiry (the store enforces both).
      const parentKeyId = principal.via === 'api_key' ? (principal.apiKeyId ?? null) : null;
      const bounded = principal.via === 'api_key' ? boundByMinter(principal, body) : body;
      const at = now();
      const expiresAt = body.expires_at ? parseTimestamp(body.expires_at) : null;
      if (expiresAt && expiresAt.getTime() <= at.getTime())
        throw validationError('/body/expires_at', 'must be in the future');
      const limits = await decideKeyLimitsAtCreation(principal, bounded, deps).catch((error: unknown) => {
        // A limited key's refusals name its limit, for existing and unknown ids alike (docs/auth.md).
        const limitedTo = principal.limits?.customerId;
        if (limitedTo && error instanceof DomainError && error.code === 'not_found')
          throw new DomainError('forbidden', `this API key is limited to customer ${limitedTo}`);
        throw error;
      });
      const { key, digest } = generateApiKey();
      const created = await db(() =>
        deps.store.createWithinQuota(
          {
            userId: principal.userId,
            name: body.name,
            digest,
            expiresAt,
            serviceId: limits.serviceId,
            customerId: limits.customerId,
            actions: [...(limits.actions ?? [])],
            parentKeyId,
          },
          at,
        ),
      );
      if (created === 'parent_revoked')
        throw new DomainError('unauthenticated', 'this API key was revoked or expired');
      if (created === 'outlives_parent')
        throw validationError(
          '/body/expires_at',
          'must not be later than the expiry of the API key minting it',
        );
      return {
        id: created.id,
        name: created.name,
        key,
        created_at: iso(created.createdAt),
        expires_at: isoOrNull(created.expiresAt),
        limits: limitsOf(created),
      };
    },

    async list(principal: Principal) {
      const keys = await db(() => deps.store.listForUser(principal.userId));
      return { data: keys.map(toListItem), total: keys.length };
    },

    /**
     * Own keys; an unscoped admin any key; a customer-scoped admin also the keys of the users it
     * manages (operators and viewers of its customer). Any other key is 404, like an unknown one.
     */
    async revoke(principal: Principal, id: string): Promise<void> {
      if (!(await db(() => deps.store.revoke(id, keyRevokeScope(principal), now())))) {
        throw new DomainError('not_found', `API key ${id} not found`);
      }
    },
  };
}

function limitsOf(key: ApiKey): ApiKeyListItem['limits'] {
  return {
    service_id: key.serviceId,
    customer_id: key.customerId,
    actions: key.actions.length > 0 ? key.actions : null,
  };
}

function toListItem(key: ApiKey): ApiKeyListItem {
  return {
    id: key.id,
    name: key.name,
    created_at: iso(key.createdAt),
    expires_at: isoOrNull(key.expiresAt),
    last_used_at: isoOrNull(key.lastUsedAt),
    limits: limitsOf(key),
  };
}

const iso = (date: Date) => date.toISOString();
const isoOrNull = (date: Date | null) => (date ? date.toISOString() : null);
