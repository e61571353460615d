import { randomBytes } from 'node:crypto';
import { customerScope, scopeAllows, type Principal } from '@hostctl/auth-policy';
import type {
  CustomersStore,
  NotificationDeliveryRow,
  NotificationSubscriptionRow,
  NotificationsStore,
} from '@hostctl/db';
import { DomainError, LIMITS, PLATFORM_NOTIFICATION_EVENTS, validationError } from '@hostctl/domain';
import { checkNotificationUrl, type GitUrlOptions } from '@hostctl/source-policy';
import type {
  CreateSubscriptionBody,
  Delivery,
  Subscription,
  SubscriptionListQuery,
  UpdateSubscriptionBody,
} from './notifications.schemas.js';

export type NotificationsService = ReturnType<typeof createNotificationsService>;

export interface NotificationsDeps {
  store: NotificationsStore;
  customers: Pick<CustomersStore, 'findById'>;
  /** NOTIFICATION_ALLOWED_HOSTS and the control plane's endpoints (never the git allowlist). */
  urlPolicy: GitUrlOptions;
  /** NOTIFY_REDELIVER_INTERVAL_MS and NOTIFY_REDELIVER_PER_MINUTE. */
  redeliverThrottle: { intervalMs: number; perMinute: number };
  /** PLATFORM_NOTIFICATIONS_CUSTOMER_ID: the only customer whose subscriptions may list platform events. */
  platformCustomerId: string;
  /** Enqueues one attempt now; best effort: the worker's relay enqueues what this misses. */
  enqueueAttempt: (deliveryId: string, attempts: number) => Promise<void>;
}

/** `whsec_` + 32 random bytes: recognisable by secret scanners, never stored anywhere but the row. */
const newSecret = () => `whsec_${randomBytes(32).toString('base64url')}`;

export function createNotificationsService(deps: NotificationsDeps) {
  const notFound = (id: string) => new DomainError('not_found', `notification subscription ${id} not found`);

  const checkUrl = (url: string) => {
    const verdict = checkNotificationUrl(url, deps.urlPolicy);
    if (!verdict.ok) throw validationError('/body/url', verdict.reason);
  };

  /**
   * Certificate alerts are about the platform, for its operator: a tenant's receiver never gets
   * them, so a tenant's subscription may not list them (docs/notifications.md#platform-events).
   */
  const checkEvents = (customerId: string, events: readonly string[] | undefined) => {
    const platform = events?.filter((event) =>
      (PLATFORM_NOTIFICATION_EVENTS as readonly string[]).includes(event),
    );
    if (platform?.length && customerId !== deps.platformCustomerId)
      throw validationError(
        '/body/events',
        `${platform.join(', ')} go only to the operator's customer (PLATFORM_NOTIFICATIONS_CUSTOMER_ID)`,
      );
  };

  /** The subscription's customer: named in the body by unscoped callers, implied for scoped ones. */
  const resolveCustomer = async (principal: Principal, requested: string | undefined): Promise<string> => {
    const customerId = requested ?? principal.customerId ?? undefined;
    if (customerId === undefined) throw validationError('/body/customer_id', 'is required');
    if (!scopeAllows(customerScope(principal), customerId))
      throw new DomainError('forbidden', 'you may only subscribe for your own customer');
    if (!(await deps.customers.findById(customerId)))
      throw validationError('/body/customer_id', 'names no existing customer');
    return customerId;
  };

  return {
    async create(principal: Principal, body: CreateSubscriptionBody) {
      checkUrl(body.url);
      const customerId = await resolveCustomer(principal, body.customer_id);
      checkEvents(customerId, body.events);
      const secret = newSecret();
      // Each subscription multiplies every event's deliveries: the notification_subscriptions
      // quota (25 in the default plan) keeps one customer's fan-out small (docs/quotas.md).
      const row = await deps.store.createWithinQuota({
        customerId,
        url: body.url,
        events: body.events,
        enabled: body.enabled ?? true,
        description: body.description ?? '',
        secret,
      });
      return { ...toSubscription(row), secret };
    },

    async list(principal: Principal, query: SubscriptionListQuery) {
      const page = query.page ?? 1;
      const perPage = query.per_page ?? LIMITS.perPageDefault;
      const { rows, total } = await deps.store.list(customerScope(principal), { page, perPage });
      return { data: rows.map(toSubscription), total, page, per_page: perPage };
    },

    async get(principal: Principal, id: string) {
      const row = await deps.store.find(customerScope(principal), id);
      if (!row) throw notFound(id);
      return toSubscription(row);
    },

    async update(principal: Principal, id: string, body: UpdateSubscriptionBody) {
      if (body.url !== undefined) checkUrl(body.url);
      if (body.events !== undefined) {
        const existing = await deps.store.find(customerScope(principal), id);
        if (!existing) throw notFound(id);
        checkEvents(existing.customerId, body.events);
      }
      const row = await deps.store.update(customerScope(principal), id, body);
      if (!row) throw notFound(id);
      return toSubscription(row);
    },

    async remove(principal: Principal, id: string) {
      if (!(await deps.store.remove(customerScope(principal), id))) throw notFound(id);
    },

    /** A new secret, effective for the next attempt of every delivery (pending ones included). */
    async rotateSecret(principal: Principal, id: string) {
      const secret = newSecret();
      const row = await deps.store.update(customerScope(principal), id, { secret });
      if (!row) throw notFound(id);
      return { ...toSubscription(row), secret };
    },

    async deliveries(principal: Principal, id: string, query: SubscriptionListQuery) {
      const page = query.page ?? 1;
      const perPage = query.per_page ?? LIMITS.perPageDefault;
      const found = await deps.store.listDeliveries(customerScope(principal), id, { page, perPage });
      if (!found) throw notFound(id);
      return { data: found.rows.map(toDelivery), total: found.total, page, per_page: perPage };
    },

    async redeliver(principal: Principal, id: string) {
      const outcome = await deps.store.redeliver(customerScope(principal), id, deps.redeliverThrottle);
      switch (outcome.kind) {
        case 'not_found':
          throw new DomainError('not_found', `notification delivery ${id} not found`);
        case 'in_flight':
          throw new DomainError(
            'conflict',
            `an attempt of notification delivery ${id} is in flight; redeliver it once that attempt has finished`,
          );
        case 'too_soon':
          throw tooMany(
            `notification delivery ${id} was redelivered less than ${deps.redeliverThrottle.intervalMs / 1000} s ago`,
            outcome.retryAfterMs,
          );
        case 'customer_limit':
          throw tooMany(
            `at most ${deps.redeliverThrottle.perMinute} redeliveries per minute for one customer`,
            outcome.retryAfterMs,
          );
        case 'redelivered':
          await deps.enqueueAttempt(outcome.row.id, outcome.row.attempts).catch(() => undefined);
          return toDelivery(outcome.row);
      }
    },
  };
}

const tooMany = (message: string, retryAfterMs: number) =>
  new DomainError('rate_limited', message, {
    headers: { 'retry-after': String(Math.max(1, Math.ceil(retryAfterMs / 1000))) },
  });

function toSubscription(row: NotificationSubscriptionRow): Subscription {
  return {
    id: row.id,
    customer_id: row.customerId,
    url: row.url,
    events: row.events,
    enabled: row.enabled,
    description: row.description,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

const iso = (value: Date | null) => (value ? value.toISOString() : null);

function toDelivery(row: NotificationDeliveryRow): Delivery {
  return {
    id: row.id,
    subscription_id: row.subscriptionId,
    event: row.event,
    status: row.status,
    attempts: row.attempts,
    last_status_code: row.lastStatusCode,
    last_error: row.lastError,
    last_response: row.lastResponse,
    last_attempt_at: iso(row.lastAttemptAt),
    next_attempt_at: iso(row.nextAttemptAt),
    delivered_at: iso(row.deliveredAt),
    created_at: row.createdAt.toISOString(),
  };
}
