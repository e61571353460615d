import type { BackupMetricsStore, ServiceBackupFigures } from '@hostctl/db';
import { Gauge, type Registry } from 'prom-client';
import { sharedScrapeRead } from './scrape-read.js';

/**
 * Each service's backups for an operator's alerts (docs/backups.md#metrics), read from the
 * database at scrape time like the service usage gauges: every replica reports the same values.
 * One series per live service that has any backup row, labelled by ids only (service_id,
 * customer_id): bounded by the number of services, and no tenant-typed text in the exposition.
 */
export function registerBackupMetrics(
  registry: Registry,
  store: Pick<BackupMetricsStore, 'perService'>,
): void {
  const rows = sharedScrapeRead(() => store.perService());
  // null: the service has no series of this gauge.
  const gauge = (name: string, help: string, valueOf: (row: ServiceBackupFigures) => number | null) =>
    new Gauge({
      name,
      help,
      labelNames: ['service_id', 'customer_id'],
      registers: [registry],
      async collect() {
        const current = await rows();
        if (!current) return;
        this.reset();
        for (const row of current) {
          const value = valueOf(row);
          if (value !== null) this.set({ service_id: row.serviceId, customer_id: row.customerId }, value);
        }
      },
    });
  gauge(
    'hostctl_backup_last_success_timestamp_seconds',
    'Unix time at which the newest succeeded backup of each service finished; 0 while it has backups but none succeeded.',
    // 0 rather than no series: `time() - this > 25 * 3600` then also fires for a service whose
    // every backup failed or was missed.
    (row) => (row.lastSuccess ? row.lastSuccess.finishedAt.getTime() / 1000 : 0),
  );
  gauge(
    'hostctl_backup_last_success_duration_seconds',
    'How long the newest succeeded backup of each service ran.',
    (row) => (row.lastSuccess?.durationMs == null ? null : row.lastSuccess.durationMs / 1000),
  );
  gauge(
    'hostctl_backup_last_success_size_bytes',
    'Size of the newest succeeded backup of each service, as recorded (the bytes of its volumes).',
    (row) => row.lastSuccess?.sizeBytes ?? null,
  );
  gauge(
    'hostctl_backup_failures_last_24h',
    'Backups of each service asked for (or due by its schedule) in the last 24 hours that failed or were missed.',
    (row) => row.failuresLast24h,
  );
}
