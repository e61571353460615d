import type { CustomerScope } from '@hostctl/auth-policy';
import type { NotificationDeliveryStatus, NotificationEvent } from '@hostctl/domain';
import type { Db } from '../client.js';
import { customerWhere } from './scope-where.js';

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
    async create(input: {
      customerId: string;
      url: string;
      events: NotificationEvent[];
      enabled: boolean;
      description: string;
      secret: string;
    }): Promise<NotificationSubscriptionRow> {
      return asSubscription(
        await db.notificationSubscription.create({ data: input, select: SUBSCRIPTION_COLUMNS }),
      );
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
     */
    async redeliver(scope: CustomerScope, id: string): Promise<NotificationDeliveryRow | null> {
      const where = customerWhere(scope);
      if (!where) return null;
      const owned = { id, subscription: where };
      const now = new Date();
      const restarted = await db.notificationDelivery.updateMany({
        where: { ...owned, status: { in: ['delivered', 'failed'] } },
        data: { status: 'pending', attempts: 0, nextAttemptAt: now, deliveredAt: null },
      });
      if (restarted.count === 0)
        await db.notificationDelivery.updateMany({
          where: { ...owned, status: 'pending' },
          data: { nextAttemptAt: now },
        });
      const row = await db.notificationDelivery.findFirst({ where: owned, select: DELIVERY_COLUMNS });
      return row ? asDelivery(row) : null;
    },
  };
}

export type NotificationsStore = ReturnType<typeof createNotificationsStore>;
