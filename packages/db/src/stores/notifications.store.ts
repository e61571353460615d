import type { CustomerScope } from '@hostctl/auth-policy';
import { quotaExceeded, type NotificationDeliveryStatus, type NotificationEvent } from '@hostctl/domain';
import type { Db } from '../client.js';
import { CAP_TRANSACTION, lockCountCap } from './count-cap-lock.js';
import { customerWhere } from './scope-where.js';
import { customerLimits, lockCustomerQuota } from './quota-ledger.js';

/** A subscription as the API shows it: never the secret (docs/notifications.md). */
export interface NotificationSubscriptionRow {
  id: string;
  customerId: string;
  url: string;
  events: NotificationEvent[];
  enabled: boolean;
  description: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface NotificationDeliveryRow {
  id: string;
  subscriptionId: string;
  event: string;
  status: NotificationDeliveryStatus;
  attempts: number;
  nextAttemptAt: Date | null;
  lastAttemptAt: Date | null;
  lastStatusCode: number | null;
  lastError: string | null;
  lastResponse: string | null;
  deliveredAt: Date | null;
  createdAt: Date;
}

export interface SubscriptionChange {
  url?: string;
  events?: NotificationEvent[];
  enabled?: boolean;
  description?: string;
}

export type RedeliverOutcome =
  | { kind: 'redelivered'; row: NotificationDeliveryRow }
  | { kind: 'not_found' }
  | { kind: 'in_flight'; until: Date }
  | { kind: 'too_soon'; retryAfterMs: number }
  | { kind: 'customer_limit'; retryAfterMs: number };

const MINUTE_MS = 60_000;

interface Page {
  page: number;
  perPage: number;
}

const SUBSCRIPTION_COLUMNS = {
  id: true,
  customerId: true,
  url: true,
  events: true,
  enabled: true,
  description: true,
  createdAt: true,
  updatedAt: true,
} as const;

const DELIVERY_COLUMNS = {
  id: true,
  subscriptionId: true,
  event: true,
  status: true,
  attempts: true,
  nextAttemptAt: true,
  lastAttemptAt: true,
  lastStatusCode: true,
  lastError: true,
  lastResponse: true,
  deliveredAt: true,
  createdAt: true,
} as const;

const asSubscription = (row: { events: string[] } & Omit<NotificationSubscriptionRow, 'events'>) =>
  row as NotificationSubscriptionRow;
const asDelivery = (row: { status: string } & Omit<NotificationDeliveryRow, 'status'>) =>
  row as NotificationDeliveryRow;

/**
 * The API's subscriptions and delivery log. Every read and write takes the caller's CustomerScope:
 * another customer's subscription or delivery is simply not found.
 */
export function createNotificationsStore(db: Db) {
  const visible = (scope: CustomerScope, id: string) => {
    const where = customerWhere(scope);
    return where ? { id, ...where } : null;
  };

  return {
    /**
     * Inserts the subscription unless its customer is at its notification_subscriptions quota
     * (quota_exceeded); the count and the insert run under the customer's quota lock, so parallel
     * creates cannot pass the count together.
     */
    async createWithinQuota(input: {
      customerId: string;
      url: string;
      events: NotificationEvent[];
      enabled: boolean;
      description: string;
      secret: string;
    }): Promise<NotificationSubscriptionRow> {
      // The limit is read before the lock: the locked section stays as short as the count and the
      // insert, which is what a burst queues on (docs/security/limits.md#count-caps).
      const limit = (await customerLimits(db, input.customerId)).notification_subscriptions;
      return db.$transaction(async (tx) => {
        await lockCustomerQuota(tx, input.customerId);
        const existing = await tx.notificationSubscription.count({ where: { customerId: input.customerId } });
        if (limit !== null && existing + 1 > limit)
          throw quotaExceeded({
            name: 'notification_subscriptions',
            limit,
            usage: existing,
            requested: 1,
            customer_id: input.customerId,
          });
        return asSubscription(
          await tx.notificationSubscription.create({ data: input, select: SUBSCRIPTION_COLUMNS }),
        );
      }, CAP_TRANSACTION);
    },

    async list(
      scope: CustomerScope,
      page: Page,
    ): Promise<{ rows: NotificationSubscriptionRow[]; total: number }> {
      const where = customerWhere(scope);
      if (!where) return { rows: [], total: 0 };
      const [rows, total] = await Promise.all([
        db.notificationSubscription.findMany({
          where,
          select: SUBSCRIPTION_COLUMNS,
          orderBy: [{ createdAt: 'desc' }, { id: 'asc' }],
          skip: (page.page - 1) * page.perPage,
          take: page.perPage,
        }),
        db.notificationSubscription.count({ where }),
      ]);
      return { rows: rows.map(asSubscription), total };
    },

    async find(scope: CustomerScope, id: string): Promise<NotificationSubscriptionRow | null> {
      const where = visible(scope, id);
      if (!where) return null;
      const row = await db.notificationSubscription.findFirst({ where, select: SUBSCRIPTION_COLUMNS });
      return row ? asSubscription(row) : null;
    },

    /** Applies the change (and a new secret, for rotation) to a visible subscription; null when not found. */
    async update(
      scope: CustomerScope,
      id: string,
      change: SubscriptionChange & { secret?: string },
    ): Promise<NotificationSubscriptionRow | null> {
      const where = visible(scope, id);
      if (!where) return null;
      const done = await db.notificationSubscription.updateMany({ where, data: change });
      if (done.count === 0) return null;
      return this.find(scope, id);
    },

    /** Deletes the subscription and, with it, its delivery log. */
    async remove(scope: CustomerScope, id: string): Promise<boolean> {
      const where = visible(scope, id);
      if (!where) return false;
      return (await db.notificationSubscription.deleteMany({ where })).count > 0;
    },

    /** The subscription's deliveries, newest first; null when the subscription is not visible. */
    async listDeliveries(
      scope: CustomerScope,
      subscriptionId: string,
      page: Page,
    ): Promise<{ rows: NotificationDeliveryRow[]; total: number } | null> {
      if (!(await this.find(scope, subscriptionId))) return null;
      const where = { subscriptionId };
      const [rows, total] = await Promise.all([
        db.notificationDelivery.findMany({
          where,
          select: DELIVERY_COLUMNS,
          orderBy: [{ createdAt: 'desc' }, { id: 'asc' }],
          skip: (page.page - 1) * page.perPage,
          take: page.perPage,
        }),
        db.notificationDelivery.count({ where }),
      ]);
      return { rows: rows.map(asDelivery), total };
    },

    /**
     * Due now: a finished delivery starts a new round of attempts; a pending one keeps its count
     * and skips its backoff. The same delivery id (Hostctl-Delivery) and body are sent again.
     * Refused while an attempt is in flight (a second one would run beside it), sooner than
     * `intervalMs` after the delivery's last redelivery, and beyond `perMinute` redeliveries of the
     * customer in the last minute (counted under the customer's lock, so a burst cannot pass it).
     */
    async redeliver(
      scope: CustomerScope,
      id: string,
      throttle: { intervalMs: number; perMinute: number },
    ): Promise<RedeliverOutcome> {
      const where = customerWhere(scope);
      if (!where) return { kind: 'not_found' };
      const owned = { id, subscription: where };
      return db.$transaction(async (tx): Promise<RedeliverOutcome> => {
        const found = await tx.notificationDelivery.findFirst({
          where: owned,
          select: { subscription: { select: { customerId: true } } },
        });
        if (!found) return { kind: 'not_found' };
        const customerId = found.subscription.customerId;
        await lockCountCap(tx, 'notificationRedeliveries', customerId);
        // Read again under the lock: a redelivery that committed meanwhile is seen.
        const current = await tx.notificationDelivery.findUniqueOrThrow({
          where: { id },
          select: { inFlightUntil: true, redeliveredAt: true },
        });
        const now = new Date();
        // Spacing first: a second ask right after a redelivery is "too soon" whether or not the
        // attempt it started is still running, so the answer does not depend on the worker's pace.
        const sinceLast = current.redeliveredAt ? now.getTime() - current.redeliveredAt.getTime() : Infinity;
        if (sinceLast < throttle.intervalMs)
          return { kind: 'too_soon', retryAfterMs: throttle.intervalMs - sinceLast };
        if (current.inFlightUntil && current.inFlightUntil > now)
          return { kind: 'in_flight', until: current.inFlightUntil };
        const windowStart = new Date(now.getTime() - MINUTE_MS);
        const recent = await tx.notificationDelivery.aggregate({
          where: { redeliveredAt: { gt: windowStart }, subscription: { customerId } },
          _count: { _all: true },
          _min: { redeliveredAt: true },
        });
        if (recent._count._all >= throttle.perMinute) {
          const oldest = recent._min.redeliveredAt ?? now;
          return { kind: 'customer_limit', retryAfterMs: oldest.getTime() + MINUTE_MS - now.getTime() };
        }
        const notInFlight = { OR: [{ inFlightUntil: null }, { inFlightUntil: { lte: now } }] };
        const restarted = await tx.notificationDelivery.updateMany({
          where: { id, status: { in: ['delivered', 'failed'] } },
          data: {
            status: 'pending',
            attempts: 0,
            nextAttemptAt: now,
            deliveredAt: null,
            inFlightUntil: null,
            redeliveredAt: now,
          },
        });
        if (restarted.count === 0) {
          const hurried = await tx.notificationDelivery.updateMany({
            where: { id, status: 'pending', ...notInFlight },
            data: { nextAttemptAt: now, redeliveredAt: now },
          });
          // A worker claimed it between the check and this update: that attempt is the redelivery.
          if (hurried.count === 0) return { kind: 'in_flight', until: now };
        }
        const row = await tx.notificationDelivery.findUniqueOrThrow({
          where: { id },
          select: DELIVERY_COLUMNS,
        });
        return { kind: 'redelivered', row: asDelivery(row) };
      }, CAP_TRANSACTION);
    },
  };
}

export type NotificationsStore = ReturnType<typeof createNotificationsStore>;
