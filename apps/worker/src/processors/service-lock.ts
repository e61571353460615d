import { DelayedError, type Job } from 'bullmq';
import type { AdvisoryLocks, Lease } from '@hostctl/db';
import type { Logger } from 'pino';
import { messageOf } from '../pipeline/step-errors.js';

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

/**
 * A sweep's repair of one service (the reconciler, the Swarm update follower): runs `repair` only
 * while no job holds the service's lock, since the job owns the service meanwhile, and holds the
 * lock throughout. A failed repair is logged and left to the next sweep. Resolves to what `repair`
 * resolved, or undefined when the lock was taken or the repair failed.
 */
export async function repairWhileUnlocked<T>(
  locks: Pick<AdvisoryLocks, 'tryAcquire'>,
  serviceId: string,
  failure: { logger: Logger; message: string },
  repair: () => Promise<T>,
): Promise<T | undefined> {
  const lease = await locks.tryAcquire(serviceId);
  if (!lease) return undefined;
  try {
    return await repair();
  } catch (error) {
    failure.logger.warn({ serviceId, err: messageOf(error) }, failure.message);
    return undefined;
  } finally {
    await lease.release();
  }
}
