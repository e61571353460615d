import type { AdvisoryLocks, Lease } from '@hostctl/db';

/**
 * "One replica at a time" for the periodic observers (health checks, resource sampling): a
 * PostgreSQL advisory lock kept for as long as this process lives. When the holder dies its
 * connection closes, PostgreSQL frees the lock, and the next replica to ask becomes the leader.
 * Unlike a lock taken per sweep, a replica that is not the leader never runs a sweep, so checks
 * do not happen twice as often with two replicas.
 */
export interface Leadership {
  isLeader(): Promise<boolean>;
  release(): Promise<void>;
}

export function createLeadership(locks: Pick<AdvisoryLocks, 'tryAcquire'>, key: string): Leadership {
  let lease: Lease | null = null;
  // Calls are chained: two observers asking at once must not each take (and leak) a connection.
  let chain: Promise<unknown> = Promise.resolve();

  const check = async (): Promise<boolean> => {
    if (lease?.isHeld) return true;
    // The connection holding the lock was lost, and the lock with it: ask again.
    if (lease) await lease.release().catch(() => undefined);
    lease = await locks.tryAcquire(key).catch(() => null);
    return lease !== null;
  };

  const serialized = <T>(run: () => Promise<T>): Promise<T> => {
    const next = chain.then(run, run);
    chain = next.catch(() => undefined);
    return next;
  };

  return {
    isLeader: () => serialized(check),
    release: () =>
      serialized(async () => {
        await lease?.release();
        lease = null;
      }),
  };
}
