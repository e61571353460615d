import { DelayedError, UnrecoverableError, Worker, type Job } from 'bullmq';
import { QUEUES, WORKER_LOCKING, type JobPayload } from '@hostctl/queue';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { JobOutcome } from './metrics/worker-metrics.js';

/**
 * One BullMQ worker per queue, dispatching by job name to the processors. Long jobs (deploy,
 * delete) and the short jobs the API awaits (lifecycle) have separate queues so a slow deploy
 * never delays a stop button.
 */
export interface Processors {
  deploy(job: Job<JobPayload<'deploy'>>, token?: string): Promise<unknown>;
  delete(job: Job<JobPayload<'delete'>>, token?: string): Promise<unknown>;
  lifecycle(job: Job<JobPayload<'lifecycle'>>, token?: string): Promise<unknown>;
}

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
  processors: Processors;
  logger: Logger;
  observer?: JobObserver;
}): Worker[] {
  const { connection, prefix, concurrency, processors, logger } = options;
  const observer = options.observer ?? noObserver;
  const common = { connection, prefix, concurrency, autorun: false, ...WORKER_LOCKING };
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
  const deployments = new Worker(
    QUEUES.deployments,
    observed(QUEUES.deployments, async (job, token) => {
      if (job.name === 'deploy') return processors.deploy(job as Job<JobPayload<'deploy'>>, token);
      if (job.name === 'delete') return processors.delete(job as Job<JobPayload<'delete'>>, token);
      throw new UnrecoverableError(`unknown job ${job.name} on the ${QUEUES.deployments} queue`);
    }),
    common,
  );
  const operations = new Worker(
    QUEUES.operations,
    observed(QUEUES.operations, async (job, token) => {
      if (job.name === 'lifecycle') return processors.lifecycle(job as Job<JobPayload<'lifecycle'>>, token);
      throw new UnrecoverableError(`unknown job ${job.name} on the ${QUEUES.operations} queue`);
    }),
    common,
  );
  for (const worker of [deployments, operations]) {
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
  return [deployments, operations];
}

/** DelayedError is not a failure: the job went back to wait for its service's lock. */
function outcomeOf(job: Job, error: unknown): JobOutcome {
  if (error instanceof DelayedError) return 'delayed';
  if (error instanceof UnrecoverableError) return 'failed';
  return job.attemptsMade + 1 >= (job.opts.attempts ?? 1) ? 'failed' : 'retry';
}
