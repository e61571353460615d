import type { Db } from '../client.js';
import { CAP_TRANSACTION, lockCountCap } from './count-cap-lock.js';

/** What the worker needs to send one attempt of a delivery. */
export interface ClaimedDelivery {
  id: string;
  event: string;
  body: unknown;
  /** This attempt's number (1 for the first of a round). */
  attempt: number;
  subscription: { url: string; secret: string; enabled: boolean };
}

export interface AttemptResult {
  statusCode: number | null;
  error: string | null;
  response: string | null;
}

/**
 * The worker's side of the outbox (docs/notifications.md#durability). A delivery is claimed by a
 * conditional update that counts the attempt and pushes `next_attempt_at` and `in_flight_until` one
 * lease ahead: a duplicate job finds it not due and does nothing, and a worker killed mid-attempt
 * leaves a row the relay finds due again once the lease is over (at least once, never lost).
 *
 * Fairness (docs/notifications.md#fairness): a customer holds at most `share` leases at a time,
 * counted under the customer's lock, so a slow receiver of one customer cannot take the slots of
 * every sender; and the relay enqueues at most `share` due deliveries per customer per pass, so
 * one customer's backlog cannot fill the batch either.
 */
export function createWorkerNotificationStore(db: Db) {
  return {
    /** Due deliveries, oldest first, at most `perCustomer` of each customer, with their attempt count. */
    async listDue(limit: number, perCustomer: number): Promise<{ id: string; attempts: number }[]> {
      return db.$queryRaw<{ id: string; attempts: number }[]>`
        SELECT id, attempts FROM (
          SELECT d.id, d.attempts, d.next_attempt_at,
                 row_number() OVER (PARTITION BY s.customer_id ORDER BY d.next_attempt_at, d.id) AS rank
          FROM notification_deliveries d
          JOIN notification_subscriptions s ON s.id = d.subscription_id
          WHERE d.status = 'pending' AND d.next_attempt_at <= ${new Date()}
        ) due
        WHERE rank <= ${perCustomer}
        ORDER BY next_attempt_at, id
        LIMIT ${limit}`;
    },

    /**
     * The delivery's next attempt, or null when it is not due (a duplicate job, or an attempt in
     * flight), or 'customer_busy' when its customer already holds `share` attempts: the delivery
     * stays due and the relay enqueues it again.
     */
    async claim(
      id: string,
      leaseMs: number,
      share: number,
    ): Promise<ClaimedDelivery | 'customer_busy' | null> {
      const now = new Date();
      const due = { id, status: 'pending', nextAttemptAt: { lte: now } };
      const claimed = await db.$transaction(async (tx) => {
        const row = await tx.notificationDelivery.findFirst({
          where: due,
          select: { subscription: { select: { customerId: true } } },
        });
        if (!row) return null;
        const customerId = row.subscription.customerId;
        await lockCountCap(tx, 'notificationSends', customerId);
        const inFlight = await tx.notificationDelivery.count({
          where: { inFlightUntil: { gt: now }, subscription: { customerId } },
        });
        if (inFlight >= share) return 'customer_busy' as const;
        const lease = new Date(now.getTime() + leaseMs);
        const updated = await tx.notificationDelivery.updateMany({
          where: { ...due, OR: [{ inFlightUntil: null }, { inFlightUntil: { lte: now } }] },
          data: {
            attempts: { increment: 1 },
            lastAttemptAt: now,
            nextAttemptAt: lease,
            inFlightUntil: lease,
          },
        });
        return updated.count === 0 ? null : ('claimed' as const);
      }, CAP_TRANSACTION);
      if (claimed !== 'claimed') return claimed;
      const row = await db.notificationDelivery.findUnique({
        where: { id },
        select: {
          id: true,
          event: true,
          body: true,
          attempts: true,
          subscription: { select: { url: true, secret: true, enabled: true } },
        },
      });
      if (!row) return null;
      return {
        id: row.id,
        event: row.event,
        body: row.body,
        attempt: row.attempts,
        subscription: row.subscription,
      };
    },

    /** A 2xx answer: delivered, whatever attempt got there first. */
    async recordDelivered(id: string, result: AttemptResult): Promise<void> {
      await db.notificationDelivery.updateMany({
        where: { id, status: 'pending' },
        data: {
          status: 'delivered',
          deliveredAt: new Date(),
          nextAttemptAt: null,
          inFlightUntil: null,
          lastStatusCode: result.statusCode,
          lastError: null,
          lastResponse: result.response,
        },
      });
    },

    /**
     * A failed attempt: retried at `retryAt`, or failed for good (null). Only the attempt that
     * holds the claim writes (a stale attempt whose lease ran out must not undo a newer one).
     */
    async recordFailure(
      id: string,
      attempt: number,
      result: AttemptResult,
      retryAt: Date | null,
    ): Promise<void> {
      await db.notificationDelivery.updateMany({
        where: { id, status: 'pending', attempts: attempt },
        data: {
          ...(retryAt ? { nextAttemptAt: retryAt } : { status: 'failed', nextAttemptAt: null }),
          inFlightUntil: null,
          lastStatusCode: result.statusCode,
          lastError: result.error,
          lastResponse: result.response,
        },
      });
    },
  };
}

export type WorkerNotificationStore = ReturnType<typeof createWorkerNotificationStore>;
