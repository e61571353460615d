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
  new Gauge({
    name: 'hostctl_certificate_not_after_seconds',
    help: 'Unix time at which each platform certificate expires (its not_after).',
    labelNames: ['name'],
    registers: [registry],
    async collect() {
      const rows = await states();
      if (!rows) return;
      this.reset();
      for (const row of rows) if (row.notAfter) this.set({ name: row.name }, row.notAfter.getTime() / 1000);
    },
  });
  new Gauge({
    name: 'hostctl_certificate_renewal_failing',
    help: '1 while the last attempt to order a platform certificate failed (last_error set), else 0.',
    labelNames: ['name'],
    registers: [registry],
    async collect() {
      const rows = await states();
      if (!rows) return;
      this.reset();
      for (const row of rows) this.set({ name: row.name }, row.lastError ? 1 : 0);
    },
  });
}
