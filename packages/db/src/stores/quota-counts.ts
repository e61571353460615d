import {
  DEFAULT_QUOTA_PLAN,
  effectiveQuotaLimits,
  parseQuotaLimits,
  type QuotaLimits,
} from '@hostctl/domain';
import type { Db } from '../client.js';
import type { Tx } from './release-rollback.js';

/**
 * The counted quotas of API keys and push webhooks (docs/quotas.md): what each counts, in one
 * place, for the claims (api-keys.store.ts, webhooks.store.ts) and the usage (quota-ledger.ts).
 *
 * An API key belongs to a customer: the one it is limited to, else its owner's. A key of an
 * unscoped user that is limited to no customer belongs to no customer: it is that user's own and
 * is held to the default plan's `api_keys` limit per user.
 */

/** Whose `api_keys` quota a key counts against. */
export type KeyOwner = { kind: 'customer'; customerId: string } | { kind: 'user'; userId: string };

/** The key-space of an owner in the quota lock: a customer's id, or `user:<id>` (never a UUID). */
export const keyOwnerLockId = (owner: KeyOwner) =>
  owner.kind === 'customer' ? owner.customerId : `user:${owner.userId}`;

/** Active (not revoked, not expired at `now`) API keys of the owner. */
export async function activeApiKeys(db: Tx | Db, owner: KeyOwner, now: Date): Promise<number> {
  if (owner.kind === 'customer')
    return (await activeApiKeysByCustomer(db, [owner.customerId], now)).get(owner.customerId) ?? 0;
  const rows = await db.$queryRaw<{ count: number }[]>`
    SELECT count(*)::int AS count FROM api_keys k JOIN users u ON u.id = k.user_id
    WHERE k.user_id = ${owner.userId} AND k.customer_id IS NULL AND u.customer_id IS NULL
      AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > ${now})`;
  return rows[0]?.count ?? 0;
}

/** Active API keys per customer (the customer a key counts against: see KeyOwner). */
export function activeApiKeysByCustomer(
  db: Tx | Db,
  customerIds: string[],
  now: Date,
): Promise<Map<string, number>> {
  return countsByCustomer(db.$queryRaw<{ customerId: string; count: number }[]>`
    SELECT coalesce(k.customer_id, u.customer_id) AS "customerId", count(*)::int AS count
    FROM api_keys k JOIN users u ON u.id = k.user_id
    WHERE coalesce(k.customer_id, u.customer_id) = ANY(${customerIds}::text[])
      AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > ${now})
    GROUP BY 1`);
}

/** Push webhooks of the customer's live services (one per service at most). */
export async function customerWebhooks(db: Tx | Db, customerId: string): Promise<number> {
  return (await webhooksByCustomer(db, [customerId])).get(customerId) ?? 0;
}

export function webhooksByCustomer(db: Tx | Db, customerIds: string[]): Promise<Map<string, number>> {
  return countsByCustomer(db.$queryRaw<{ customerId: string; count: number }[]>`
    SELECT s.customer_id AS "customerId", count(*)::int AS count
    FROM service_webhooks w JOIN services s ON s.id = w.service_id
    WHERE s.customer_id = ANY(${customerIds}::text[]) AND s.deleted_at IS NULL
    GROUP BY s.customer_id`);
}

/**
 * The build quotas (build-quota.ts). The steps of a running deployment that is still building
 * (the claim leaves the step unset until `source`).
 */
const BUILDING_STEPS = ['source', 'build'];

/** Builds running now, per customer: what `concurrent_builds` counts. */
export function buildsRunningByCustomer(db: Tx | Db, customerIds: string[]): Promise<Map<string, number>> {
  return countsByCustomer(db.$queryRaw<{ customerId: string; count: number }[]>`
    SELECT s.customer_id AS "customerId", count(*)::int AS count
    FROM deployments d JOIN services s ON s.id = d.service_id
    WHERE s.customer_id = ANY(${customerIds}::text[]) AND d.status = 'running'
      AND s.deploy_method IN ('git', 'ai') AND d.trigger <> 'rollback'
      AND (d.step IS NULL OR d.step = ANY(${BUILDING_STEPS}::text[]))
    GROUP BY s.customer_id`);
}

/** Build minutes begun in the last 24 hours, per customer: what `build_minutes_per_day` counts. */
export function buildMinutesByCustomer(db: Tx | Db, customerIds: string[]): Promise<Map<string, number>> {
  return countsByCustomer(db.$queryRaw<{ customerId: string; count: number }[]>`
    SELECT s.customer_id AS "customerId", ceil(sum(d.build_ms) / 60000.0)::int AS count
    FROM deployments d JOIN services s ON s.id = d.service_id
    WHERE s.customer_id = ANY(${customerIds}::text[]) AND d.built_at > now() - interval '24 hours'
    GROUP BY s.customer_id`);
}

/** A grouped count's rows as customer id → count (a customer without rows counts 0). */
export async function countsByCustomer(
  rows: Promise<{ customerId: string; count: number }[]>,
): Promise<Map<string, number>> {
  return new Map((await rows).map((row) => [row.customerId, row.count]));
}

/** The default plan's effective limits: what holds an unscoped user's own keys. */
export async function defaultPlanLimits(db: Tx | Db): Promise<QuotaLimits> {
  const rows = await db.$queryRaw<{ limits: unknown }[]>`
    SELECT limits FROM quota_plans WHERE name = ${DEFAULT_QUOTA_PLAN}`;
  return effectiveQuotaLimits(parseQuotaLimits(rows[0]?.limits), {}, {});
}
