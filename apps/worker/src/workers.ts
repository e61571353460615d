import { hostname } from 'node:os';
import { DelayedError, UnrecoverableError, Worker, type Job } from 'bullmq';
import {
  InvalidJobPayloadError,
  JOBS,
  QUEUES,
  WORKER_LOCKING,
  isJobName,
  parsePayload,
  type JobName,
  type JobPayload,
  type QueueName,
} from '@hostctl/queue';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { JobOutcome } from './metrics/worker-metrics.js';

/**
 * One handler per job of the catalog: a job added to the catalog without a handler here is a type
 * error, not a job that fails at run time.
 */
export type Processors = {
  [N in JobName]: (job: Job<JobPayload<N>>, token?: string) => Promise<unknown>;
};

/** Sees every job this replica runs: metrics and the watchdog's count of busy slots. */
export interface JobObserver {
  started(queue: string, job: string): void;
  finished(queue: string, job: string, outcome: JobOutcome, seconds: number): void;
  stalled(queue: string): void;
}

const noObserver: JobObserver = { started() {}, finished() {}, stalled() {} };

export function createWorkers(options: {
  connection: Redis;
  prefix: string;
  concurrency: number;
  /** Queues whose jobs wait on I/O for long (terminals) get their own number of slots. */
  queueConcurrency?: Partial<Record<QueueName, number>>;
  processors: Processors;
  logger: Logger;
  observer?: JobObserver;
}): Worker[] {
  const { connection, prefix, concurrency, processors, logger } = options;
  const observer = options.observer ?? noObserver;
  // The replica a job ran on is kept with the job (BullMQ's `processedBy`): which worker held a
  // job that stalled, or whose job to look at in its logs, is then a lookup, not a guess.
  const name = `${hostname()}:${process.pid}`;
  const common = { connection, prefix, concurrency, name, autorun: false, ...WORKER_LOCKING };
  const observed =
    (queue: string, dispatch: (job: Job, token?: string) => Promise<unknown>) =>
    async (job: Job, token?: string) => {
      const started = performance.now();
      observer.started(queue, job.name);
      let outcome: JobOutcome = 'completed';
      try {
        return await dispatch(job, token);
      } catch (error) {
        outcome = outcomeOf(job, error);
        throw error;
      } finally {
        observer.finished(queue, job.name, outcome, (performance.now() - started) / 1000);
      }
    };
  // Payloads are validated before a handler sees them: a malformed job can never succeed on a
  // retry, so it fails permanently (and is logged) instead of reaching a processor.
  const dispatch = (queue: QueueName) => async (job: Job, token?: string) => {
    if (!isJobName(job.name) || JOBS[job.name].queue !== queue) {
      throw new UnrecoverableError(`unknown job ${job.name} on the ${queue} queue`);
    }
    const name = job.name;
    try {
      parsePayload(name, job.data);
    } catch (error) {
      if (!(error instanceof InvalidJobPayloadError)) throw error;
      logger.error(
        { queue, job: name, jobId: job.id, problems: error.problems },
        'job refused: invalid payload',
      );
      throw new UnrecoverableError(error.message);
    }
    const handler = processors[name] as (job: Job, token?: string) => Promise<unknown>;
    return handler(job, token);
  };
  const workers = Object.values(QUEUES).map(
    (queue) =>
      new Worker(queue, observed(queue, dispatch(queue)), {
        ...common,
        concurrency: options.queueConcurrency?.[queue] ?? concurrency,
      }),
  );
  for (const worker of workers) {
    worker.on('stalled', (jobId) => {
      observer.stalled(worker.name);
      logger.warn(
        { queue: worker.name, jobId },
        'job stalled (its worker died or lost its lock); handed back',
      );
    });
    worker.on('failed', (job, error) =>
      logger.warn({ queue: worker.name, job: job?.name, jobId: job?.id, err: error.message }, 'job failed'),
    );
    // Without a listener an error event (e.g. Redis down) would crash the process; BullMQ reconnects.
    worker.on('error', (error) => logger.error({ queue: worker.name, err: error.message }, 'worker error'));
  }
  return workers;
}

/** DelayedError is not a failure: the job went back to wait for its service's lock. */
function outcomeOf(job: Job, error: unknown): JobOutcome {
  if (error instanceof DelayedError) return 'delayed';
  if (error instanceof UnrecoverableError) return 'failed';
  return job.attemptsMade + 1 >= (job.opts.attempts ?? 1) ? 'failed' : 'retry';
}
