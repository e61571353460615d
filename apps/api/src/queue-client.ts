import { QueueEvents, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { FastifyBaseLogger } from 'fastify';
import { DomainError, type LifecycleAction, type ServiceStatus } from '@hostctl/domain';
import { QUEUES, type LifecycleResult, type Producer } from '@hostctl/queue';

export type LifecycleOutcome =
  | { kind: 'done'; status: ServiceStatus; message: string }
  | { kind: 'failed'; reason: string }
  | { kind: 'pending' };

/** What the API needs from the queues. Deploys and deletes are durable in Postgres first. */
export interface JobQueue {
  enqueueDeploy(deploymentId: string): Promise<void>;
  enqueueDelete(serviceId: string): Promise<void>;
  /** Runs start/stop/restart on a worker and waits up to the configured bound for its result. */
  runLifecycle(serviceId: string, action: LifecycleAction): Promise<LifecycleOutcome>;
  /**
   * Hands a recorded drain/activate to a worker. Not durable like deploys (no reconciler sweep
   * finds it), so a failed enqueue is a 503 and the operator repeats the request.
   */
  enqueueNodeAvailability(nodeId: string): Promise<void>;
  close(): Promise<void>;
}

export function createJobQueue(deps: {
  producer: Producer;
  connection: Redis;
  prefix: string;
  lifecycleWaitMs: number;
  log: FastifyBaseLogger;
}): JobQueue {
  const { producer, log } = deps;
  let events: QueueEvents | undefined;
  const queueEvents = (): QueueEvents => {
    events ??= new QueueEvents(QUEUES.operations, {
      connection: deps.connection.duplicate(),
      prefix: deps.prefix,
    });
    return events;
  };

  /**
   * The row is committed already; if Redis is unreachable the reconciler re-enqueues it, so the
   * request is still accepted. Losing the enqueue is a delay, never a lost deploy.
   */
  async function enqueueDurable(what: string, enqueue: () => Promise<Job>): Promise<void> {
    try {
      await enqueue();
    } catch (error) {
      log.warn({ err: error, what }, 'enqueue failed; the reconciler will pick the request up');
    }
  }

  return {
    enqueueDeploy: (deploymentId) =>
      enqueueDurable(`deploy ${deploymentId}`, () => producer.enqueue('deploy', { deploymentId })),
    enqueueDelete: (serviceId) =>
      enqueueDurable(`delete ${serviceId}`, () => producer.enqueue('delete', { serviceId })),

    async enqueueNodeAvailability(nodeId) {
      try {
        await producer.enqueue('node-availability', { nodeId });
      } catch (error) {
        throw new DomainError('dependency_unavailable', 'the job queue is unavailable; retry shortly', {
          headers: { 'retry-after': '5' },
          cause: error,
        });
      }
    },

    async runLifecycle(serviceId, action) {
      let job: Job;
      try {
        job = await producer.enqueue('lifecycle', { serviceId, action });
      } catch (error) {
        throw new DomainError('dependency_unavailable', 'the job queue is unavailable; retry shortly', {
          headers: { 'retry-after': '5' },
          cause: error,
        });
      }
      try {
        const result = (await job.waitUntilFinished(queueEvents(), deps.lifecycleWaitMs)) as LifecycleResult;
        return { kind: 'done', status: result.status, message: result.message };
      } catch (error) {
        const message = (error as Error).message ?? '';
        if (/timed out/i.test(message)) return { kind: 'pending' };
        return { kind: 'failed', reason: message };
      }
    },

    async close() {
      await events?.close();
    },
  };
}
