import type { AdvisoryLocks } from '@hostctl/db';
import { DNS_ZONE_LOCK_PREFIX } from '../network/zone-writes.js';
import type { LockScope, WorkerMetrics } from './worker-metrics.js';

/**
 * Counts lock contention and waits without touching the processors: every lock user gets this
 * decorator from the composition root. The reconciler's sweep lock is reported apart, since its
 * contention is normal (one replica sweeps, the others skip), and so are DNS zone writes.
 */
export function instrumentLocks(
  locks: AdvisoryLocks,
  metrics: Pick<WorkerMetrics, 'lockContended' | 'lockWaited'>,
): AdvisoryLocks {
  const scopeOf = (key: string): LockScope =>
    key.startsWith('hostctl:reconciler:')
      ? 'reconciler'
      : key.startsWith(DNS_ZONE_LOCK_PREFIX)
        ? 'dns_zone'
        : 'service';
  return {
    async tryAcquire(key) {
      const lease = await locks.tryAcquire(key);
      if (!lease) metrics.lockContended(scopeOf(key));
      return lease;
    },
    async acquire(key, waitMs) {
      const started = performance.now();
      const first = await locks.tryAcquire(key);
      if (first) return first;
      metrics.lockContended(scopeOf(key));
      const lease = await locks.acquire(key, waitMs);
      metrics.lockWaited(scopeOf(key), lease ? 'acquired' : 'timeout', (performance.now() - started) / 1000);
      return lease;
    },
    close: () => locks.close(),
  };
}
