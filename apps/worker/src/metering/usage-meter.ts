import type { WorkerConfig } from '@hostctl/config';
import { createUsageMeterStore, type Db } from '@hostctl/db';
import type { Logger } from 'pino';
import { createPeriodic } from '../health/periodic.js';

/**
 * Closes hours of usage (docs/metering.md). Records are derived from the spans the database
 * keeps (a trigger on services), so a worker that is down, killed or cut off from Redis loses
 * nothing: the next round of any replica closes what is due. An hour is closed only
 * CLOSE_DELAY_MS after it ended, so a transaction that began before the hour ended (its spans
 * end at its start time) has committed by then: the bounded transactions of this codebase last
 * at most 15 s.
 */
const CLOSE_DELAY_MS = 2 * 60 * 1000;
/** Hours closed per round at most: a worker back after a long outage catches up over a few rounds. */
const HOURS_PER_ROUND = 24;

export function createUsageMeter(
  config: Pick<WorkerConfig, 'METERING_INTERVAL_MS' | 'PLATFORM_NOTIFICATIONS_CUSTOMER_ID'>,
  deps: { db: Db; logger: Logger },
) {
  const store = createUsageMeterStore(deps.db, {
    platformCustomerId: config.PLATFORM_NOTIFICATIONS_CUSTOMER_ID,
  });
  const runOnce = async (now = new Date()) => {
    const closed = await store.closeDue(now, CLOSE_DELAY_MS, HOURS_PER_ROUND);
    for (const period of closed)
      deps.logger.info(
        { periodStart: period.periodStart, customers: period.customers, records: period.records },
        'usage hour closed',
      );
    return closed;
  };
  const periodic = createPeriodic('usage meter', config.METERING_INTERVAL_MS, runOnce, deps.logger);
  return { runOnce, start: periodic.start, stop: periodic.stop };
}
