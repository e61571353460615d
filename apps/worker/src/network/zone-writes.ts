import type { AdvisoryLocks } from '@hostctl/db';
import { DomainError } from '@hostctl/domain';

/**
 * One writer per DNS zone across every worker replica. PowerDNS's SQLite backend (the dev stack's,
 * and a common small install) answers "database is locked" (500) to concurrent writes instead of
 * queueing them: 64 of 80 parallel record writes failed when measured (docs/networking.md). Jobs
 * retried their way to a clean zone, but a deploy's DNS write must not depend on retries, so the
 * writes of a zone are serialized on a PostgreSQL advisory lock (every replica shares the database,
 * and a dead worker's lock goes with its connection).
 */
export type ZoneWriteGate = <T>(zone: string, write: () => Promise<T>) => Promise<T>;

export const DNS_ZONE_LOCK_PREFIX = 'hostctl:dns-zone:';

/** How long a write waits for the zone before the job fails (and is retried) with the reason. */
const ZONE_WAIT_MS = 30_000;

export function oneWriterPerZone(
  locks: Pick<AdvisoryLocks, 'acquire'>,
  waitMs = ZONE_WAIT_MS,
): ZoneWriteGate {
  return async (zone, write) => {
    const lease = await locks.acquire(`${DNS_ZONE_LOCK_PREFIX}${zone}`, waitMs);
    if (!lease)
      throw new DomainError(
        'runtime_error',
        `DNS zone ${zone} stayed busy for ${waitMs} ms: another worker is writing it`,
      );
    try {
      return await write();
    } finally {
      await lease.release();
    }
  };
}
