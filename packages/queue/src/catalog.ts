import type { DefaultJobOptions } from 'bullmq';
import type { LifecycleAction } from '@hostctl/domain';

export const QUEUES = {
  /** Long jobs: deploy/redeploy and delete. */
  deployments: 'deployments',
  /** Short jobs the API awaits: start, stop, restart. */
  operations: 'operations',
} as const;
export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];

export interface JobCatalog {
  deploy: { queue: 'deployments'; payload: { deploymentId: string } };
  delete: { queue: 'deployments'; payload: { serviceId: string } };
  lifecycle: { queue: 'operations'; payload: { serviceId: string; action: LifecycleAction } };
}
export type JobName = keyof JobCatalog;
export type JobPayload<N extends JobName> = JobCatalog[N]['payload'];

export interface LifecycleResult {
  status: 'running' | 'stopped' | 'deploying' | 'failed';
  message: string;
}

/** Deterministic job ids: enqueuing the same deployment twice is a no-op while it is known. */
export const jobIds = {
  deploy: (payload: JobPayload<'deploy'>) => `deploy.${payload.deploymentId}`,
  delete: (payload: JobPayload<'delete'>) => `delete.${payload.serviceId}`,
} as const;

const RETRYING: DefaultJobOptions = {
  attempts: 20,
  backoff: { type: 'exponential', delay: 1000 },
  removeOnComplete: { age: 3600, count: 1000 },
  removeOnFail: { age: 24 * 3600 },
};

export const JOB_OPTIONS: Record<JobName, DefaultJobOptions> = {
  deploy: { ...RETRYING, attempts: 5 },
  delete: RETRYING,
  lifecycle: { attempts: 1, removeOnComplete: { age: 600 }, removeOnFail: { age: 3600 } },
};

/**
 * Lock and stall settings: a job whose worker died is handed to another within ~15 s;
 * maxStalledCount > 1 so a deploy interrupted twice is not failed for it.
 */
export const WORKER_LOCKING = { lockDuration: 10_000, stalledInterval: 5_000, maxStalledCount: 5 } as const;
