import type { ServiceMetricsStore } from '@hostctl/db';
import type { Logger } from 'pino';
import type { Leadership } from '../health/leadership.js';
import { createPeriodic } from '../health/periodic.js';

/**
 * Deletes resource-history buckets past their retention (service-metrics.store.ts), on the
 * observers' leader only. Deletes go in bounded batches, a few per round: at steady state a round
 * removes what aged out since the previous one (one 5-minute and one hourly bucket per service
 * per 5 minutes and hour), and a backlog (workers down for days) drains over a few rounds instead
 * of one long transaction.
 */
const PRUNE_INTERVAL_MS = 5 * 60_000;
const BATCH = 5000;
const BATCHES_PER_ROUND = 20;

export function createHistoryPruner(deps: {
  store: Pick<ServiceMetricsStore, 'prune'>;
  leadership: Leadership;
  logger: Logger;
  intervalMs?: number;
}) {
  const runOnce = async (now = new Date()): Promise<number | null> => {
    if (!(await deps.leadership.isLeader())) return null;
    let removed = 0;
    for (let round = 0; round < BATCHES_PER_ROUND; round++) {
      const batch = await deps.store.prune(now, BATCH);
      removed += batch;
      if (batch < BATCH) break;
    }
    if (removed > 0) deps.logger.info({ removed }, 'resource history pruned');
    return removed;
  };
  const periodic = createPeriodic(
    'history pruning',
    deps.intervalMs ?? PRUNE_INTERVAL_MS,
    runOnce,
    deps.logger,
  );
  return { runOnce, start: periodic.start, stop: periodic.stop };
}
