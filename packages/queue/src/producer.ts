import { Queue, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { JOB_OPTIONS, QUEUES, jobIds, type JobName, type JobPayload, type QueueName } from './catalog.js';

export interface Producer {
  enqueue<N extends JobName>(name: N, payload: JobPayload<N>): Promise<Job>;
  queue(name: QueueName): Queue;
  close(): Promise<void>;
}

const QUEUE_OF: Record<JobName, QueueName> = {
  deploy: QUEUES.deployments,
  delete: QUEUES.deployments,
  lifecycle: QUEUES.operations,
};

export function createProducer(connection: Redis, prefix: string): Producer {
  const queues = new Map<QueueName, Queue>();
  const queue = (name: QueueName): Queue => {
    let found = queues.get(name);
    if (!found) {
      found = new Queue(name, { connection, prefix });
      queues.set(name, found);
    }
    return found;
  };
  return {
    queue,
    async enqueue(name, payload) {
      const idOf = (jobIds as Partial<Record<JobName, (p: typeof payload) => string>>)[name];
      const jobId = idOf?.(payload);
      return queue(QUEUE_OF[name]).add(name, payload, { ...JOB_OPTIONS[name], ...(jobId ? { jobId } : {}) });
    },
    async close() {
      await Promise.all([...queues.values()].map((q) => q.close()));
    },
  };
}
