import type { Db } from '../client.js';

/**
 * Per-service backup figures for the worker's Prometheus gauges (docs/backups.md#metrics): what an
 * operator alerting on "no good backup for 25 hours" or "backups failing" reads at scrape time.
 */
export interface ServiceBackupFigures {
  serviceId: string;
  customerId: string;
  /** The newest succeeded backup (by when it was asked for), or null when none ever succeeded. */
  lastSuccess: { finishedAt: Date; durationMs: number | null; sizeBytes: number | null } | null;
  /** Backups asked for (or due by the schedule) in the last 24 hours that failed or were missed. */
  failuresLast24h: number;
}

interface Row {
  service_id: string;
  customer_id: string;
  finished_at: Date | null;
  duration_ms: number | null;
  size_bytes: bigint | null;
  failures: bigint;
}

export function createBackupMetricsStore(db: Db) {
  return {
    /**
     * One statement for every live service with at least one backup row (any status): a service
     * never backed up has no figures. Each lateral walks the (service_id, created_at) index from
     * the newest row, so a scrape costs a few index probes per service, not a scan of the history.
     */
    async perService(): Promise<ServiceBackupFigures[]> {
      const rows = await db.$queryRaw<Row[]>`
        SELECT s.id AS service_id, s.customer_id, ok.finished_at, ok.duration_ms, ok.size_bytes,
               coalesce(bad.failures, 0) AS failures
        FROM services s
        LEFT JOIN LATERAL (
          SELECT b.finished_at, b.duration_ms, b.size_bytes FROM backups b
          WHERE b.service_id = s.id AND b.status = 'succeeded' AND b.finished_at IS NOT NULL
          ORDER BY b.created_at DESC LIMIT 1
        ) ok ON true
        LEFT JOIN LATERAL (
          SELECT count(*) AS failures FROM backups b
          WHERE b.service_id = s.id AND b.created_at > now() - interval '24 hours'
            AND b.status IN ('failed', 'missed')
        ) bad ON true
        WHERE s.deleted_at IS NULL
          AND EXISTS (SELECT 1 FROM backups b WHERE b.service_id = s.id)
        ORDER BY s.id`;
      return rows.map((row) => ({
        serviceId: row.service_id,
        customerId: row.customer_id,
        lastSuccess: row.finished_at
          ? {
              finishedAt: row.finished_at,
              durationMs: row.duration_ms,
              sizeBytes: row.size_bytes === null ? null : Number(row.size_bytes),
            }
          : null,
        failuresLast24h: Number(row.failures),
      }));
    },
  };
}

export type BackupMetricsStore = ReturnType<typeof createBackupMetricsStore>;
