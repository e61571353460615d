import { UnrecoverableError, Worker, type Job } from 'bullmq';
import { QUEUES, WORKER_LOCKING, type JobPayload } from '@hostctl/queue';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';

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

export function createWorkers(options: {
  connection: Redis;
  prefix: string;
  concurrency: number;
  processors: Processors;
  logger: Logger;
}): Worker[] {
  const { connection, prefix, concurrency, processors, logger } = options;
  const common = { connection, prefix, concurrency, autorun: false, ...WORKER_LOCKING };
  const deployments = new Worker(
    QUEUES.deployments,
    async (job: Job, token?: string) => {
      if (job.name === 'deploy') return processors.deploy(job as Job<JobPayload<'deploy'>>, token);
      if (job.name === 'delete') return processors.delete(job as Job<JobPayload<'delete'>>, token);
      throw new UnrecoverableError(`unknown job ${job.name} on the ${QUEUES.deployments} queue`);
    },
    common,
  );
  const operations = new Worker(
    QUEUES.operations,
    async (job: Job, token?: string) => {
      if (job.name === 'lifecycle') return processors.lifecycle(job as Job<JobPayload<'lifecycle'>>, token);
      throw new UnrecoverableError(`unknown job ${job.name} on the ${QUEUES.operations} queue`);
    },
    common,
  );
  for (const worker of [deployments, operations]) {
    worker.on('failed', (job, error) =>
      logger.warn({ queue: worker.name, job: job?.name, jobId: job?.id, err: error.message }, 'job failed'),
    );
    // Without a listener an error event (e.g. Redis down) would crash the process; BullMQ reconnects.
    worker.on('error', (error) => logger.error({ queue: worker.name, err: error.message }, 'worker error'));
  }
  return [deployments, operations];
}
