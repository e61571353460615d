import { DelayedError, type Job } from 'bullmq';
import type { AdvisoryLocks, Lease } from '@hostctl/db';

/**
 * At most one deploy/lifecycle/delete job per service at a time, across every replica. Long jobs
 * that find the lock taken go back to the delayed set instead of occupying a worker slot.
 */
export const LOCK_RETRY_DELAY_MS = 1000;

export async function lockOrDelay(
  locks: AdvisoryLocks,
  serviceId: string,
  job: Job,
  token: string | undefined,
): Promise<Lease> {
  const lease = await locks.tryAcquire(serviceId);
  if (lease) return lease;
  await job.moveToDelayed(Date.now() + LOCK_RETRY_DELAY_MS, token);
  throw new DelayedError();
}
