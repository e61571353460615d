import type { ServiceMetricsStore } from '@hostctl/db';
import { Gauge, type Registry } from 'prom-client';
import { sharedScrapeRead } from './scrape-read.js';

/**
 * Each running service's latest resource sample (docs/health-and-resources.md#prometheus), read
 * from the database at scrape time like the certificate gauges: every replica reports the same
 * installation-wide values, so an operator's Prometheus may scrape any one of them and keep its
 * own history and alerts. One series per running service and gauge (labels: service id and
 * name, customer id).
 */
export function registerServiceUsageMetrics(
  registry: Registry,
  store: Pick<ServiceMetricsStore, 'latestOfRunning'>,
): void {
  const rows = sharedScrapeRead(() => store.latestOfRunning());
  type Row = NonNullable<Awaited<ReturnType<typeof rows>>>[number];
  const gauge = (name: string, help: string, valueOf: (row: Row) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['service_id', 'service', 'customer_id'],
      registers: [registry],
      async collect() {
        const current = await rows();
        if (!current) return;
        this.reset();
        for (const row of current)
          this.set({ service_id: row.id, service: row.name, customer_id: row.customerId }, valueOf(row));
      },
    });
  gauge(
    'hostctl_service_cpu_percent',
    'Latest CPU sample of each running service: percent of one CPU, summed over its containers.',
    (row) => row.cpu,
  );
  gauge(
    'hostctl_service_memory_bytes',
    'Latest memory sample of each running service: working set, summed over its containers.',
    (row) => row.memoryMb * 1024 * 1024,
  );
  gauge(
    'hostctl_service_memory_limit_bytes',
    'Memory limit of each running service (0: none).',
    (row) => row.memoryLimitMb * 1024 * 1024,
  );
  gauge(
    'hostctl_service_restarts_last_hour',
    'Container restarts of each running service in its 5-minute history buckets of the last hour.',
    (row) => row.restartsLastHour,
  );
}
