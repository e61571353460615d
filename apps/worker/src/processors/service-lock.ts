import { DelayedError, type Job } from 'bullmq';
import type { AdvisoryLocks, Lease } from '@hostctl/db';
import type { Logger } from 'pino';
import { messageOf } from '../pipeline/step-errors.js';

/**
 * At most one deploy/lifecycle/delete job per service at a time, across every replica. Long jobs
 * that find the lock taken go back to the delayed set instead of occupying a worker slot.
 */
export const LOCK_RETRY_DELAY_MS = 1000;

/**
 * A release in its window pauses without the lock (release/release-waiting.ts) but still owns the
 * service until its deployment is settled: jobs that change the service's containers wait for it.
 */
export interface ReleaseWindows {
  otherInWindow(serviceId: string, exceptDeploymentId?: string): Promise<boolean>;
}

/**
 * `windows`: also wait while a release of the service (other than `except`, the job's own) is in
 * its window. Only a delete goes without: it cancels that release and removes everything.
 */
export async function lockOrDelay(
  locks: AdvisoryLocks,
  serviceId: string,
  job: Job,
  token: string | undefined,
  windows?: { store: ReleaseWindows; except?: string },
): Promise<Lease> {
  const lease = await locks.tryAcquire(serviceId);
  if (lease) {
    const isOwned = windows
      ? await windows.store.otherInWindow(serviceId, windows.except).catch(async (error: unknown) => {
          await lease.release();
          throw error;
        })
      : false;
    if (!isOwned) return lease;
    await lease.release();
  }
  await job.moveToDelayed(Date.now() + LOCK_RETRY_DELAY_MS, token);
  throw new DelayedError();
}

/**
 * Every service of a customer shares one restic repository, and restic 0.14 cannot wait for a
 * lock: a prune (exclusive) failed another service's backup of the same customer with
 * "repository is already locked". So one backup, restore or check per repository at a time,
 * across every replica (docs/backups.md#one-run-per-repository). Taken after the service's lock,
 * never waited for while holding it: a run that finds the repository busy gives `held` back and
 * goes to the delayed set, like one that finds the service busy.
 */
export async function repositoryLockOrDelay(
  locks: AdvisoryLocks,
  customerId: string,
  held: Lease,
  job: Job,
  token: string | undefined,
): Promise<Lease> {
  const lease = await locks.tryAcquire(`backup-repository:${customerId}`).catch(async (error: unknown) => {
    await held.release();
    throw error;
  });
  if (lease) return lease;
  await held.release();
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
