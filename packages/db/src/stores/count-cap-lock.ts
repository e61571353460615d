import type { Prisma } from '../generated/client.ts';

/**
 * Serialises "count, then insert if below the cap" per owner (docs/security/limits.md#count-caps).
 * Under READ COMMITTED, even a single `INSERT … SELECT … WHERE (SELECT count(*) …) < cap` lets two
 * concurrent statements see the same count and both insert (seen: 40 parallel creates against a cap
 * of 25 → 26 rows). A transaction-scoped advisory lock per cap and owner, taken before the count,
 * makes the second request wait for the first one's commit and count its row.
 *
 * The two-int form (cap, hashtext(owner)) is a lock space of its own: it never collides with the
 * worker's single-key service locks (worker-locks.store.ts). A hash collision of two owners only
 * serialises their creates, it never lets a create past its cap.
 */
export const COUNT_CAPS = {
  // 1 was notification subscriptions, now counted under the customer's quota lock (quota-ledger.ts).
  // 2 was a service's push webhook, now counted under the customer's quota lock (quota-ledger.ts).
  /** Not a row cap: a customer's notification attempts in flight (worker-notifications.store.ts). */
  notificationSends: 3,
  /** A customer's redeliveries per minute (notifications.store.ts). */
  notificationRedeliveries: 4,
  /** Not a row cap: a customer's deployments running at once (worker-deployments.store.ts). */
  deploySlots: 5,
  /** A service's scheduled jobs (schedules.store.ts). */
  serviceSchedules: 6,
  /** A customer's variable groups (variable-groups.store.ts). */
  variableGroups: 7,
} as const;

export async function lockCountCap(
  tx: Prisma.TransactionClient,
  cap: keyof typeof COUNT_CAPS,
  ownerId: string,
): Promise<void> {
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(${COUNT_CAPS[cap]}::int, hashtext(${ownerId}))`;
}

/**
 * Options of a cap's transaction. Requests racing for one cap queue on its lock, each holding a
 * pooled connection, so Prisma's default wait to start a transaction (2 s) turned a burst into
 * 500s (seen: 130 parallel key creates on two replicas → 46 of 65 per replica "Unable to start a
 * transaction in the given time"). Each holder is a few short statements; waiting longer is right.
 */
export const CAP_TRANSACTION = { maxWait: 15_000, timeout: 15_000 } as const;
