import type { Logger } from 'pino';
import type { WorkerMetrics } from './metrics/worker-metrics.js';

/**
 * Watches that this replica really consumes its queues, so /livez can say so. Two failure modes:
 * a consumer loop that ended (restarted here at once) and a loop that still "runs" but takes
 * nothing (e.g. a blocking connection wedged after a Redis outage): a job left waiting for longer
 * than `stuckAfterMs` while this replica had a free slot the whole time. BullMQ hands a waiting job
 * to any free consumer within milliseconds, so that only happens when this one is not listening;
 * the replica then reports itself not live and its supervisor restarts it.
 */
export interface WatchedConsumer {
  readonly name: string;
  isRunning(): boolean;
  run(): Promise<void>;
}

export interface ConsumerWatchdogDeps {
  consumers: WatchedConsumer[];
  concurrency: number;
  /** Id of the oldest waiting job of the queue (undefined when none); rejects when Redis is unreachable. */
  oldestWaiting(queue: string): Promise<string | undefined>;
  /** Jobs of the queue this replica is running right now. */
  busy(queue: string): number;
  stuckAfterMs: number;
  logger: Logger;
  metrics: Pick<WorkerMetrics, 'consuming' | 'loopRestarted'>;
}

export interface Liveness {
  isLive: boolean;
  problems: string[];
}

export function createConsumerWatchdog(deps: ConsumerWatchdogDeps) {
  const watches = new Map<string, { jobId: string; since: number }>();
  /** Per queue: why this replica is not consuming it (absent when it is). */
  const problems = new Map<string, string>();
  let timer: NodeJS.Timeout | undefined;
  let checking: Promise<void> | undefined;

  const checkOne = async (consumer: WatchedConsumer): Promise<void> => {
    if (!consumer.isRunning()) {
      deps.logger.error({ queue: consumer.name }, 'watchdog: queue consumer stopped; restarting it');
      deps.metrics.loopRestarted(consumer.name);
      watches.delete(consumer.name);
      consumer
        .run()
        .catch((error: unknown) =>
          deps.logger.error(
            { queue: consumer.name, err: String(error) },
            'watchdog: consumer restart failed',
          ),
        );
      problems.set(consumer.name, `the ${consumer.name} consumer had stopped (restarted)`);
      return;
    }
    // Running again: only a job stuck behind it can still make it not live.
    if (!watches.has(consumer.name)) problems.delete(consumer.name);
    let oldest: string | undefined;
    try {
      oldest = await deps.oldestWaiting(consumer.name);
    } catch {
      // Redis unreachable: readiness reports that; a consumer cannot be judged without it.
      return;
    }
    const now = Date.now();
    if (!oldest || deps.busy(consumer.name) >= deps.concurrency) {
      watches.delete(consumer.name);
      problems.delete(consumer.name);
      return;
    }
    const watch = watches.get(consumer.name);
    if (watch?.jobId !== oldest) {
      watches.set(consumer.name, { jobId: oldest, since: now });
      problems.delete(consumer.name);
      return;
    }
    if (now - watch.since > deps.stuckAfterMs && !problems.has(consumer.name)) {
      const problem = `job ${oldest} has waited ${Math.round((now - watch.since) / 1000)}s in ${consumer.name} while this replica had a free slot`;
      deps.logger.error({ queue: consumer.name, jobId: oldest }, `watchdog: ${problem}; reporting not live`);
      problems.set(consumer.name, problem);
    }
  };

  const check = async (): Promise<void> => {
    for (const consumer of deps.consumers) {
      await checkOne(consumer);
      deps.metrics.consuming(consumer.name, !problems.has(consumer.name));
    }
  };

  return {
    check,
    liveness(): Liveness {
      return { isLive: problems.size === 0, problems: [...problems.values()] };
    },
    start(intervalMs: number): void {
      for (const consumer of deps.consumers) deps.metrics.consuming(consumer.name, true);
      const tick = () => {
        checking = check().finally(() => {
          if (timer !== undefined) timer = setTimeout(tick, intervalMs);
        });
      };
      timer = setTimeout(tick, intervalMs);
    },
    async stop(): Promise<void> {
      clearTimeout(timer);
      timer = undefined;
      await checking;
    },
  };
}

export type ConsumerWatchdog = ReturnType<typeof createConsumerWatchdog>;
