import {
  isDomainError,
  effectiveQuotaLimits,
  parseQuotaLimits,
  quotaExceeded,
  DEFAULT_QUOTA_PLAN,
  type QuotaLimits,
  type QuotaName,
} from '@hostctl/domain';
import type { Db } from '../client.js';
import { CAP_TRANSACTION } from './count-cap-lock.js';
import {
  activeApiKeysByCustomer,
  buildMinutesByCustomer,
  buildsRunningByCustomer,
  countsByCustomer,
  webhooksByCustomer,
} from './quota-counts.js';
import type { Tx } from './release-rollback.js';

/**
 * The per-customer quotas (docs/quotas.md): every check and the write it guards run in one
 * transaction under the customer's advisory lock, taken before anything is counted, so parallel
 * requests of one customer are counted one after the other (a count-then-insert let each see the
 * same old total). The two-key form keeps this lock out of the one-key space of the worker's
 * service locks. Always taken before a service row lock (queueRedeploy, requestRollback), never
 * after, so the two orders cannot deadlock.
 *
 * A claim is refused only when it grows a figure past its limit: a service keeping or shrinking
 * what it claims (a redeploy of the same plan) passes even after an admin lowered the quota below
 * the customer's usage. Lowering a quota stops growth; it never stops what runs.
 */
export interface CapacityClaim {
  /** Containers the definition runs (replicas summed over components). */
  containers: number;
  /** Memory limits summed over those containers, in MiB (rounded up). */
  memoryMb: number;
  /** CPU limits summed over those containers, in thousandths of a CPU (rounded up). */
  millicpus: number;
}

export async function lockCustomerQuota(tx: Tx, customerId: string): Promise<void> {
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext('customer-quota'), hashtext(${customerId}))`;
}

/** The customer's effective limits: the default plan, its own plan, its overrides. */
export async function customerLimits(db: Tx | Db, customerId: string): Promise<QuotaLimits> {
  return (await limitsByCustomer(db, [customerId])).get(customerId) ?? effectiveQuotaLimits({}, {}, {});
}

/** Each customer's effective limits, in one statement (the quota watch reads every customer's). */
export async function limitsByCustomer(
  db: Tx | Db,
  customerIds: string[],
): Promise<Map<string, QuotaLimits>> {
  const rows = await db.$queryRaw<{ id: string; defaults: unknown; plan: unknown; overrides: unknown }[]>`
    SELECT c.id, d.limits AS defaults, p.limits AS plan, c.quota_overrides AS overrides
    FROM customers c
    LEFT JOIN quota_plans p ON p.name = c.quota_plan
    LEFT JOIN quota_plans d ON d.name = ${DEFAULT_QUOTA_PLAN}
    WHERE c.id = ANY(${customerIds}::text[])`;
  return new Map(
    rows.map((row) => [
      row.id,
      effectiveQuotaLimits(
        parseQuotaLimits(row.defaults),
        parseQuotaLimits(row.plan),
        parseQuotaLimits(row.overrides),
      ),
    ]),
  );
}

interface ServiceFigures {
  services: number;
  containers: number;
  memoryMb: number;
  millicpus: number;
}

const NO_SERVICES: ServiceFigures = { services: 0, containers: 0, memoryMb: 0, millicpus: 0 };

/** What the customer's live services other than `exceptServiceId` claim. */
async function servicesUsage(db: Tx | Db, customerId: string, exceptServiceId: string) {
  return (await servicesByCustomer(db, [customerId], exceptServiceId)).get(customerId) ?? NO_SERVICES;
}

async function servicesByCustomer(db: Tx | Db, customerIds: string[], exceptServiceId = '') {
  const rows = await db.$queryRaw<(ServiceFigures & { customerId: string })[]>`
    SELECT customer_id AS "customerId", count(*)::int AS services,
      coalesce(sum(containers), 0)::int AS containers,
      coalesce(sum(claimed_memory_mb), 0)::int AS "memoryMb",
      coalesce(sum(claimed_millicpus), 0)::int AS millicpus
    FROM services
    WHERE customer_id = ANY(${customerIds}::text[]) AND deleted_at IS NULL AND id <> ${exceptServiceId}
    GROUP BY customer_id`;
  return new Map(rows.map(({ customerId, ...figures }) => [customerId, figures]));
}

/** Deployments queued for the customer's services (deleted ones too) in the last hour. */
async function deploysLastHour(db: Tx | Db, customerId: string): Promise<number> {
  return (await deploysLastHourByCustomer(db, [customerId])).get(customerId) ?? 0;
}

async function deploysLastHourByCustomer(db: Tx | Db, customerIds: string[]) {
  return countsByCustomer(db.$queryRaw<{ customerId: string; count: number }[]>`
    SELECT s.customer_id AS "customerId", count(*)::int AS count
    FROM deployments d JOIN services s ON s.id = d.service_id
    WHERE s.customer_id = ANY(${customerIds}::text[]) AND d.created_at > now() - interval '1 hour'
    GROUP BY s.customer_id`);
}

/** What the customer uses of each quota. */
export async function customerUsage(db: Tx | Db, customerId: string): Promise<Record<QuotaName, number>> {
  return (await usageByCustomer(db, [customerId])).get(customerId) ?? usageOf(undefined, {});
}

/** What each customer uses of each quota, in one statement per quota kind whatever their number. */
export async function usageByCustomer(
  db: Tx | Db,
  customerIds: string[],
): Promise<Map<string, Record<QuotaName, number>>> {
  const [figures, deploys, builds, buildMinutes, subscriptions, apiKeys, webhooks] = await Promise.all([
    servicesByCustomer(db, customerIds),
    deploysLastHourByCustomer(db, customerIds),
    buildsRunningByCustomer(db, customerIds),
    buildMinutesByCustomer(db, customerIds),
    countsByCustomer(db.$queryRaw<{ customerId: string; count: number }[]>`
      SELECT customer_id AS "customerId", count(*)::int AS count FROM notification_subscriptions
      WHERE customer_id = ANY(${customerIds}::text[]) GROUP BY customer_id`),
    activeApiKeysByCustomer(db, customerIds, new Date()),
    webhooksByCustomer(db, customerIds),
  ]);
  return new Map(
    customerIds.map((id) => [
      id,
      usageOf(figures.get(id), {
        deploys: deploys.get(id),
        builds: builds.get(id),
        buildMinutes: buildMinutes.get(id),
        subscriptions: subscriptions.get(id),
        apiKeys: apiKeys.get(id),
        webhooks: webhooks.get(id),
      }),
    ]),
  );
}

function usageOf(
  figures: ServiceFigures | undefined,
  counts: Partial<
    Record<'deploys' | 'builds' | 'buildMinutes' | 'subscriptions' | 'apiKeys' | 'webhooks', number>
  >,
): Record<QuotaName, number> {
  const services = figures ?? NO_SERVICES;
  return {
    services: services.services,
    containers: services.containers,
    memory_mb: services.memoryMb,
    cpus: services.millicpus / 1000,
    deploys_per_hour: counts.deploys ?? 0,
    concurrent_builds: counts.builds ?? 0,
    build_minutes_per_day: counts.buildMinutes ?? 0,
    notification_subscriptions: counts.subscriptions ?? 0,
    api_keys: counts.apiKeys ?? 0,
    webhooks: counts.webhooks ?? 0,
  };
}

/**
 * Refuses when `requested` grows the figure (above `before`, what the service claimed so far)
 * past the limit; `others` is what the customer's other services take. `scale` turns stored
 * units into the quota's (millicpus → CPUs).
 */
function checkGrowth(
  customerId: string,
  name: QuotaName,
  limit: number | null,
  figures: { others: number; before: number; requested: number },
  scale = 1,
): void {
  const { others, before, requested } = figures;
  if (limit === null || requested <= before) return;
  if (others + requested <= limit * scale) return;
  throw quotaExceeded({
    name,
    limit,
    usage: (others + before) / scale,
    requested: (requested - before) / scale,
    customer_id: customerId,
  });
}

/**
 * Records (or checks, for a new service) what a definition claims, in the caller's transaction:
 * a new service (no `serviceId`) also counts against `services`. Throws quota_exceeded.
 */
export async function claimCapacity(
  tx: Tx,
  customerId: string,
  claim: CapacityClaim,
  serviceId?: string,
): Promise<void> {
  // The limits before the lock: the locked section stays as short as the count and the write.
  const limits = await customerLimits(tx, customerId);
  await lockCustomerQuota(tx, customerId);
  const others = await servicesUsage(tx, customerId, serviceId ?? '');
  const before = serviceId
    ? await tx.service.findUniqueOrThrow({
        where: { id: serviceId },
        select: { containers: true, claimedMemoryMb: true, claimedMillicpus: true },
      })
    : { containers: 0, claimedMemoryMb: 0, claimedMillicpus: 0 };
  if (!serviceId)
    checkGrowth(customerId, 'services', limits.services, {
      others: others.services,
      before: 0,
      requested: 1,
    });
  checkGrowth(customerId, 'containers', limits.containers, {
    others: others.containers,
    before: before.containers,
    requested: claim.containers,
  });
  checkGrowth(customerId, 'memory_mb', limits.memory_mb, {
    others: others.memoryMb,
    before: before.claimedMemoryMb,
    requested: claim.memoryMb,
  });
  checkGrowth(
    customerId,
    'cpus',
    limits.cpus,
    { others: others.millicpus, before: before.claimedMillicpus, requested: claim.millicpus },
    1000,
  );
}

/** The columns a service row stores for a claim. */
export function claimColumns(claim: CapacityClaim) {
  return { containers: claim.containers, claimedMemoryMb: claim.memoryMb, claimedMillicpus: claim.millicpus };
}

/**
 * One more deployment of the customer's (create, redeploy, rollback), under the customer's lock
 * taken by the caller's transaction before any service row lock.
 */
export async function claimDeploy(tx: Tx, customerId: string): Promise<void> {
  const limits = await customerLimits(tx, customerId);
  if (limits.deploys_per_hour === null) return;
  const used = await deploysLastHour(tx, customerId);
  if (used + 1 > limits.deploys_per_hour)
    throw quotaExceeded({
      name: 'deploys_per_hour',
      limit: limits.deploys_per_hour,
      usage: used,
      requested: 1,
      customer_id: customerId,
    });
}

/** The customer of a service, for taking its quota lock before the service row's. */
export async function customerOfService(tx: Tx, serviceId: string): Promise<string | null> {
  const rows = await tx.$queryRaw<{ customerId: string }[]>`
    SELECT customer_id AS "customerId" FROM services WHERE id = ${serviceId}`;
  return rows[0]?.customerId ?? null;
}

/**
 * The worker's deploy, once the plan is known (git/ai learn it from the repository; a rollback
 * brings an older one): records what the service now claims, or answers the refusal when it
 * would grow past a quota, leaving the record unchanged.
 */
export async function recordServiceClaim(
  db: Db,
  serviceId: string,
  claim: CapacityClaim,
): Promise<{ fits: true } | { fits: false; message: string }> {
  try {
    await db.$transaction(async (tx) => {
      const service = await tx.service.findUniqueOrThrow({
        where: { id: serviceId },
        select: { customerId: true },
      });
      await claimCapacity(tx, service.customerId, claim, serviceId);
      await tx.service.update({ where: { id: serviceId }, data: claimColumns(claim) });
    }, CAP_TRANSACTION);
    return { fits: true };
  } catch (error) {
    if (isDomainError(error) && error.code === 'quota_exceeded')
      return { fits: false, message: error.message };
    throw error;
  }
}
