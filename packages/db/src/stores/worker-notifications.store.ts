import type { Db } from '../client.js';

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
 * conditional update that counts the attempt and pushes `next_attempt_at` one lease ahead: a
 * duplicate job finds it not due and does nothing, and a worker killed mid-attempt leaves a row
 * the relay finds due again once the lease is over (at least once, never lost).
 */
export function createWorkerNotificationStore(db: Db) {
  return {
    /** Pending deliveries due now, oldest first, with their attempt count (the job id's part). */
    async listDue(limit: number): Promise<{ id: string; attempts: number }[]> {
      return db.notificationDelivery.findMany({
        where: { status: 'pending', nextAttemptAt: { lte: new Date() } },
        select: { id: true, attempts: true },
        orderBy: { nextAttemptAt: 'asc' },
        take: limit,
      });
    },

    async claim(id: string, leaseMs: number): Promise<ClaimedDelivery | null> {
      const now = new Date();
      const claimed = await db.notificationDelivery.updateMany({
        where: { id, status: 'pending', nextAttemptAt: { lte: now } },
        data: {
          attempts: { increment: 1 },
          lastAttemptAt: now,
          nextAttemptAt: new Date(now.getTime() + leaseMs),
        },
      });
      if (claimed.count === 0) return null;
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
          lastStatusCode: result.statusCode,
          lastError: result.error,
          lastResponse: result.response,
        },
      });
    },
  };
}

export type WorkerNotificationStore = ReturnType<typeof createWorkerNotificationStore>;
