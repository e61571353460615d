import type { Worker } from 'bullmq';
import type { WorkerConfig } from '@hostctl/config';
import { QUEUES, type Producer } from '@hostctl/queue';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { createConsumerWatchdog } from '../consumer-watchdog.js';
import type { WorkerMetrics } from '../metrics/worker-metrics.js';
import { createWorkers, type Processors } from '../workers.js';
import type { WorkerPart } from '../worker-parts.js';

const WATCHDOG_INTERVAL_MS = 5000;

/**
 * The queue consumers and the watchdog that keeps /livez honest about them, as two worker parts:
 * the consumers stop letting running jobs finish for up to the close's grace (then are cut short and
 * retried elsewhere); the watchdog starts after and stops before the consumers it would restart.
 */
export function createConsumers(options: {
  config: WorkerConfig;
  connection: Redis;
  producer: Producer;
  processors: Processors;
  metrics: WorkerMetrics;
  logger: Logger;
  stuckAfterMs: number;
  /** How long a stop lets running jobs finish (the worker's close sets it). */
  graceMs: () => number;
}) {
  const { config, producer, metrics, logger } = options;
  const busy = new Map<string, number>();
  const workers: Worker[] = createWorkers({
    connection: options.connection,
    prefix: config.QUEUE_PREFIX,
    concurrency: config.WORKER_CONCURRENCY,
    queueConcurrency: { terminals: config.EXEC_WORKER_SLOTS },
    processors: options.processors,
    logger,
    observer: {
      started: (queue) => {
        busy.set(queue, (busy.get(queue) ?? 0) + 1);
        metrics.jobStarted(queue);
      },
      finished: (queue, job, outcome, seconds) => {
        busy.set(queue, (busy.get(queue) ?? 1) - 1);
        metrics.jobFinished(queue, job, outcome, seconds);
      },
      stalled: (queue) => metrics.jobStalled(queue),
    },
  });
  const watchdog = createConsumerWatchdog({
    consumers: workers,
    concurrency: config.WORKER_CONCURRENCY,
    busy: (queue) => busy.get(queue) ?? 0,
    oldestWaiting: async (queue) => {
      const [oldest] = await producer
        .queue(queue as (typeof QUEUES)[keyof typeof QUEUES])
        .getJobs(['wait'], 0, 0, true);
      return oldest?.id;
    },
    stuckAfterMs: options.stuckAfterMs,
    logger,
    metrics,
  });
  const consumersPart: WorkerPart = {
    name: 'consumers',
    async start() {
      for (const worker of workers) void worker.run();
      await Promise.all(workers.map((worker) => worker.waitUntilReady()));
    },
    async stop() {
      const graceMs = options.graceMs();
      const graceful = Promise.all(workers.map((worker) => worker.close()));
      const isClean = await Promise.race([
        graceful.then(() => true),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), graceMs).unref()),
      ]);
      if (!isClean) {
        logger.warn({ graceMs }, 'jobs still running at shutdown; closing anyway (they will be retried)');
        await Promise.all(workers.map((worker) => worker.close(true)));
      }
    },
  };
  const watchdogPart: WorkerPart = {
    name: 'watchdog',
    start: () => watchdog.start(WATCHDOG_INTERVAL_MS),
    stop: () => watchdog.stop(),
  };
  return { watchdog, parts: [consumersPart, watchdogPart] };
}
