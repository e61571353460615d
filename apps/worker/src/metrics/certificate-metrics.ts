import type { TlsCertificatesStore } from '@hostctl/db';
import { Gauge, type Registry } from 'prom-client';

/**
 * Each platform certificate's expiry and renewal state (docs/tls.md#alerts), read from the
 * database at scrape time: every replica reports the same installation-wide values, so an alert
 * rule such as `hostctl_certificate_not_after_seconds - time() < 14 * 86400` works on any of them.
 */
export function registerCertificateMetrics(
  registry: Registry,
  store: Pick<TlsCertificatesStore, 'listStates'>,
): void {
  // A few rows; a failed read (database away) keeps the last values instead of failing the scrape.
  const states = () => store.listStates().catch(() => null);
  type State = NonNullable<Awaited<ReturnType<typeof states>>>[number];
  const gauge = (name: string, help: string, valueOf: (row: State) => number | null) =>
    new Gauge({
      name,
      help,
      labelNames: ['name'],
      registers: [registry],
      async collect() {
        const rows = await states();
        if (!rows) return;
        this.reset();
        for (const row of rows) {
          const value = valueOf(row);
          if (value !== null) this.set({ name: row.name }, value);
        }
      },
    });
  gauge(
    'hostctl_certificate_not_after_seconds',
    'Unix time at which each platform certificate expires (its not_after).',
    (row) => (row.notAfter ? row.notAfter.getTime() / 1000 : null),
  );
  gauge(
    'hostctl_certificate_renewal_failing',
    '1 while the last attempt to order a platform certificate failed (last_error set), else 0.',
    (row) => (row.lastError ? 1 : 0),
  );
}
