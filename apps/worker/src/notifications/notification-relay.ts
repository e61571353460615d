import type { WorkerNotificationStore } from '@hostctl/db';
import type { Producer } from '@hostctl/queue';
import type { Logger } from 'pino';
import { createPeriodic } from '../health/periodic.js';

/**
 * The outbox relay (docs/notifications.md#durability): every interval, each due pending delivery is
 * enqueued as the job of its next attempt. The job id names the attempt, so enqueuing what is
 * already queued adds nothing, and every replica may run the relay. After a Redis restart (queues
 * gone) or a worker killed mid-attempt (claim expired), the next pass enqueues the work again:
 * PostgreSQL, not Redis, is what makes a notification durable.
 */
export interface NotificationRelayDeps {
  store: Pick<WorkerNotificationStore, 'listDue'>;
  producer: Pick<Producer, 'enqueue'>;
  intervalMs: number;
  /** NOTIFY_CUSTOMER_CONCURRENCY: enqueued per customer per pass (a backlog cannot fill the batch). */
  customerShare: number;
  logger: Logger;
}

const BATCH = 500;

export function createNotificationRelay(deps: NotificationRelayDeps) {
  const runOnce = async (): Promise<number> => {
    const due = await deps.store.listDue(BATCH, deps.customerShare);
    for (const delivery of due)
      await deps.producer.enqueue('notify', { deliveryId: delivery.id, attempts: delivery.attempts });
    return due.length;
  };
  const periodic = createPeriodic('notification relay', deps.intervalMs, runOnce, deps.logger);
  return { runOnce, start: periodic.start, stop: periodic.stop };
}

export type NotificationRelay = ReturnType<typeof createNotificationRelay>;
