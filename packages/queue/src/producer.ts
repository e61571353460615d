import { Queue, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { JOBS, jobIdOf, parsePayload, type JobName, type JobPayload, type QueueName } from './catalog.js';

export interface Producer {
  /** Validates the payload against the catalog (InvalidJobPayloadError) and adds the job. */
  enqueue<N extends JobName>(name: N, payload: JobPayload<N>): Promise<Job>;
  queue(name: QueueName): Queue;
  close(): Promise<void>;
}

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
      const valid = parsePayload(name, payload);
      const jobId = jobIdOf(name, valid);
      return queue(JOBS[name].queue).add(name, valid, { ...JOBS[name].options, ...(jobId ? { jobId } : {}) });
    },
    async close() {
      await Promise.all([...queues.values()].map((q) => q.close()));
    },
  };
}
