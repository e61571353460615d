import { randomUUID } from 'node:crypto';
import type { NotificationEvent, PlatformNotificationEvent } from '@hostctl/domain';
import type { Prisma } from '../generated/client.ts';

/**
 * The outbox half of notifications (docs/notifications.md#durability): a state change that emits an
 * event calls this inside its own transaction, so the delivery rows exist exactly when the change
 * committed. The worker's relay enqueues them; nothing is lost when Redis or a worker is not there.
 */
export interface NotificationFact {
  event: NotificationEvent;
  serviceId: string;
  deployment?: { id: string; status: string; error?: string | null };
  /** job.failed / job.missed (docs/jobs.md#notifications): the schedule and the run or the times. */
  job?: {
    scheduleId: string;
    scheduleName: string;
    runId?: string;
    status: string;
    scheduledFor: Date | null;
    exitCode?: number | null;
    missedTimes?: number;
  };
  /**
   * backup.failed / backup.missed / backup.verify_failed (docs/backups.md#notifications): the run
   * (the last missed one for backup.missed) and its already-redacted reason; never a password or key.
   */
  backup?: {
    id: string;
    status: string;
    scheduledFor: Date | null;
    error?: string | null;
    missedTimes?: number;
  };
  /** service.memory_high / service.restart_loop (docs/notifications.md#threshold-alerts): the figures. */
  alert?: Record<string, number>;
  /** Shown to the receiver: never put variable values here. */
  message: string;
}

type OutboxTx = Pick<
  Prisma.TransactionClient,
  'service' | 'notificationSubscription' | 'notificationDelivery'
>;

/**
 * One pending delivery per enabled subscription of `customerId` that wants `event`, each with a
 * body built around its own delivery id and the shared creation time.
 */
async function queueDeliveries(
  tx: Pick<OutboxTx, 'notificationSubscription' | 'notificationDelivery'>,
  customerId: string,
  event: NotificationEvent | PlatformNotificationEvent,
  bodyOf: (id: string, createdAt: string) => Record<string, unknown>,
): Promise<number> {
  const subscriptions = await tx.notificationSubscription.findMany({
    where: { customerId, enabled: true, events: { has: event } },
    select: { id: true },
  });
  if (subscriptions.length === 0) return 0;
  const now = new Date();
  const rows = subscriptions.map((subscription) => {
    const id = randomUUID();
    const body = bodyOf(id, now.toISOString()) as Prisma.InputJsonObject;
    return { id, subscriptionId: subscription.id, event, body, nextAttemptAt: now };
  });
  await tx.notificationDelivery.createMany({ data: rows });
  return rows.length;
}

/** Inserts one pending delivery per enabled subscription of the service's customer that wants the event. */
export async function insertNotifications(tx: OutboxTx, fact: NotificationFact): Promise<number> {
  const service = await tx.service.findUnique({
    where: { id: fact.serviceId },
    select: { id: true, name: true, customerId: true },
  });
  if (!service) return 0;
  return queueDeliveries(tx, service.customerId, fact.event, (id, createdAt) => ({
    id,
    event: fact.event,
    created_at: createdAt,
    customer_id: service.customerId,
    service: { id: service.id, name: service.name },
    ...(fact.deployment
      ? {
          deployment: {
            id: fact.deployment.id,
            status: fact.deployment.status,
            ...(fact.deployment.error ? { error: fact.deployment.error } : {}),
          },
        }
      : {}),
    ...(fact.job ? { job: jobBody(fact.job) } : {}),
    ...(fact.backup ? { backup: backupBody(fact.backup) } : {}),
    ...(fact.alert ? { alert: fact.alert } : {}),
    message: fact.message,
  }));
}

function jobBody(job: NonNullable<NotificationFact['job']>): Record<string, unknown> {
  return {
    schedule: { id: job.scheduleId, name: job.scheduleName },
    status: job.status,
    scheduled_for: job.scheduledFor?.toISOString() ?? null,
    ...(job.runId ? { run_id: job.runId } : {}),
    ...(job.exitCode !== undefined ? { exit_code: job.exitCode } : {}),
    ...(job.missedTimes !== undefined ? { missed_times: job.missedTimes } : {}),
  };
}

function backupBody(backup: NonNullable<NotificationFact['backup']>): Record<string, unknown> {
  return {
    id: backup.id,
    status: backup.status,
    scheduled_for: backup.scheduledFor?.toISOString() ?? null,
    ...(backup.error ? { error: backup.error } : {}),
    ...(backup.missedTimes !== undefined ? { missed_times: backup.missedTimes } : {}),
  };
}

/**
 * quota.exceeded (docs/quotas.md#over-quota-notification): a fact about the customer itself, not
 * one of its services, to the customer's own enabled subscriptions that want it.
 */
export async function insertQuotaExceededNotifications(
  tx: Pick<OutboxTx, 'notificationSubscription' | 'notificationDelivery'>,
  customerId: string,
  quota: { name: string; limit: number; usage: number; since: Date },
  message: string,
): Promise<number> {
  return queueDeliveries(tx, customerId, 'quota.exceeded', (id, createdAt) => ({
    id,
    event: 'quota.exceeded',
    created_at: createdAt,
    customer_id: customerId,
    quota: { name: quota.name, limit: quota.limit, usage: quota.usage, since: quota.since.toISOString() },
    message,
  }));
}

/** A fact about the platform itself (its certificates) or for the operator's billing (usage). */
export type PlatformNotificationFact =
  | {
      event: Exclude<PlatformNotificationEvent, 'usage.period_closed'>;
      certificate: { name: string; notAfter: Date | null; lastError: string | null };
      message: string;
    }
  | {
      event: 'usage.period_closed';
      /** A closed hour's totals of one customer (docs/metering.md#notifications). */
      usage: Record<string, string | number>;
      message: string;
    };

/**
 * Platform events go to the enabled subscriptions of the operator's own customer
 * (PLATFORM_NOTIFICATIONS_CUSTOMER_ID) that want them, never to another customer's receiver
 * (docs/notifications.md#platform-events). Without that customer nothing is inserted.
 */
export async function insertPlatformNotifications(
  tx: Pick<OutboxTx, 'notificationSubscription' | 'notificationDelivery'>,
  platformCustomerId: string,
  fact: PlatformNotificationFact,
): Promise<number> {
  if (platformCustomerId === '') return 0;
  return queueDeliveries(tx, platformCustomerId, fact.event, (id, createdAt) => ({
    id,
    event: fact.event,
    created_at: createdAt,
    ...('usage' in fact
      ? { usage: fact.usage }
      : {
          certificate: {
            name: fact.certificate.name,
            not_after: fact.certificate.notAfter?.toISOString() ?? null,
            last_error: fact.certificate.lastError,
          },
        }),
    message: fact.message,
  }));
}
