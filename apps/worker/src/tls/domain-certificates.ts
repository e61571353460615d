import type { CustomDomainsStore, TlsCertificatesStore } from '@hostctl/db';
import type { Logger } from 'pino';
import { messageOf } from '../pipeline/step-errors.js';
import type { CaddyTls } from './caddy-tls.js';
import type { CertificateOrders } from './certificate-keeper.js';
import {
  accountKeyOf,
  isDue,
  orderUnderLock,
  warnIfExpiring,
  type CertificateOrderDeps,
} from './certificate-order.js';

export interface DomainCertificatesDeps {
  store: CertificateOrderDeps['store'] & Pick<TlsCertificatesStore, 'names' | 'remove'>;
  domains: Pick<CustomDomainsStore, 'verifiedNames'>;
  locks: CertificateOrderDeps['locks'];
  acme: CertificateOrders;
  /** Absent without CADDY_ADMIN_URL: nothing could answer http-01, so nothing is ordered. */
  caddy?: Pick<CaddyTls, 'loadDomain' | 'unloadDomainsExcept'>;
  /** The row whose ACME account the orders use (the wildcard's): one account for the platform. */
  accountName: string;
  /**
   * A domain whose last order failed is ordered again no sooner than this: its DNS is the
   * customer's, and a CA counts failed validations (Let's Encrypt: 5 per name per hour).
   */
  retryFailedAfterMs?: number;
  logger: Logger;
  now?: () => Date;
}

export interface DomainRound {
  issued: string[];
  loaded: string[];
  /** Certificates unloaded and forgotten: their domain was dropped or its service deleted. */
  removed: string[];
}

const RETRY_FAILED_AFTER_MS = 15 * 60 * 1000;

/**
 * A certificate per verified custom domain (docs/tls.md#custom-domain-certificates), through
 * http-01 answered by Caddy: ordered once the domain is verified, renewed at two thirds of its
 * lifetime under the advisory lock of its name, its key sealed like the wildcard's, loaded into
 * Caddy by every replica. A domain that is no longer verified for a live service loses its
 * certificate in Caddy and its row. An unverified name is never ordered: the names come from
 * the verified rows only.
 */
export function createDomainCertificates(deps: DomainCertificatesDeps) {
  const order: CertificateOrderDeps = { ...deps, now: deps.now ?? (() => new Date()) };
  const retryAfter = deps.retryFailedAfterMs ?? RETRY_FAILED_AFTER_MS;

  const waitsAfterFailure = (row: Awaited<ReturnType<typeof deps.store.find>>) =>
    row?.lastError != null &&
    row.lastAttemptAt != null &&
    order.now().getTime() - row.lastAttemptAt.getTime() < retryAfter;

  async function forgetDropped(wanted: ReadonlySet<string>): Promise<string[]> {
    const removed = (await deps.caddy?.unloadDomainsExcept(wanted)) ?? [];
    // Wildcards are the apps domain's (certificate-keeper.ts), never a custom domain's.
    const stale = (await deps.store.names()).filter((name) => !name.startsWith('*.') && !wanted.has(name));
    await deps.store.remove(stale);
    return [...new Set([...removed, ...stale])];
  }

  async function keep(name: string, outcome: DomainRound): Promise<void> {
    const current = await deps.store.find(name);
    if (isDue(current, order.now()) && !waitsAfterFailure(current)) {
      const issued = await orderUnderLock(order, name, async () =>
        deps.acme.issue(await accountKeyOf(order, deps.accountName), [name], 'http-01'),
      );
      if (issued) outcome.issued.push(name);
    }
    await warnIfExpiring(order, name);
    const latest = await deps.store.find(name);
    if (deps.caddy && latest?.certificatePem && latest.privateKeyPem) {
      if (await deps.caddy.loadDomain(name, latest.certificatePem, latest.privateKeyPem))
        outcome.loaded.push(name);
    }
  }

  return {
    async runOnce(): Promise<DomainRound> {
      const outcome: DomainRound = { issued: [], loaded: [], removed: [] };
      if (!deps.caddy) return outcome;
      const wanted = new Set(await deps.domains.verifiedNames());
      outcome.removed = await forgetDropped(wanted);
      for (const name of wanted) {
        // One domain's trouble (its DNS, Caddy refusing its PEM) never holds up the others.
        await keep(name, outcome).catch((error: unknown) => {
          deps.logger.warn({ name, err: messageOf(error) }, 'tls: custom domain certificate round failed');
        });
      }
      return outcome;
    },
  };
}
