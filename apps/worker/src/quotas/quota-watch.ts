import type { WorkerConfig } from '@hostctl/config';
import { createQuotaAlertsStore, type Db } from '@hostctl/db';
import type { Logger } from 'pino';
import { createPeriodic } from '../health/periodic.js';

/**
 * Finds customers whose usage is above a quota (an admin lowered it below usage) and sends
 * `quota.exceeded` through the notification outbox once per quota per streak
 * (docs/quotas.md#over-quota-notification). The dedup is in the database, so any number of
 * worker replicas may sweep.
 */
export function createQuotaWatch(
  config: Pick<WorkerConfig, 'QUOTA_SWEEP_INTERVAL_MS'>,
  deps: { db: Db; logger: Logger },
) {
  const store = createQuotaAlertsStore(deps.db);
  const runOnce = async () => {
    const round = await store.sweep();
    for (const alert of round.raised)
      deps.logger.warn(
        { customerId: alert.customerId, quota: alert.quota, limit: alert.limit, usage: alert.usage },
        'customer over quota',
      );
    return round;
  };
  const periodic = createPeriodic('quota watch', config.QUOTA_SWEEP_INTERVAL_MS, runOnce, deps.logger);
  return { runOnce, start: periodic.start, stop: periodic.stop };
}
