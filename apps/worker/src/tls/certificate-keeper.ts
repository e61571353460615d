import type { TlsCertificatesStore } from '@hostctl/db';
import type { Logger } from 'pino';
import type { ChallengeType, IssuedCertificate } from './acme-client.js';
import type { CaddyTls } from './caddy-tls.js';
import {
  accountKeyOf,
  isDue,
  orderUnderLock,
  warnIfExpiring,
  type CertificateOrderDeps,
} from './certificate-order.js';
import type { AccountKey } from './jws.js';

/** The ACME client as the keepers use it (acme-client.ts). */
export interface CertificateOrders {
  issue(key: AccountKey, names: readonly string[], type?: ChallengeType): Promise<IssuedCertificate>;
}

export interface CertificateKeeperDeps {
  store: CertificateOrderDeps['store'] & Pick<TlsCertificatesStore, 'find'>;
  locks: CertificateOrderDeps['locks'];
  acme: CertificateOrders;
  /** Absent without CADDY_ADMIN_URL: the certificate is kept, nothing loads it. */
  caddy?: Pick<CaddyTls, 'load' | 'ensureHttps'>;
  appsDomain: string;
  logger: Logger;
  now?: () => Date;
}

export interface KeeperOutcome {
  issued: boolean;
  /** Caddy received the certificate in this round (it had another one, or none). */
  loaded: boolean;
}

/** The wildcard's row, whose ACME account every order of the platform uses. */
export const wildcardName = (appsDomain: string) => `*.${appsDomain.replace(/\.$/, '')}`;

/**
 * Keeps `*.<APPS_DOMAIN>` (docs/tls.md): ordered through dns-01 when there is none or its renewal
 * time came, by one replica at a time (certificate-order.ts), then loaded into Caddy by every
 * replica. A failed order keeps the certificate that serves and records the error for the next
 * round to retry.
 */
export function createCertificateKeeper(deps: CertificateKeeperDeps) {
  const name = wildcardName(deps.appsDomain);
  const order: CertificateOrderDeps = { ...deps, now: deps.now ?? (() => new Date()) };

  return {
    name,
    async runOnce(): Promise<KeeperOutcome> {
      const issued = isDue(await deps.store.find(name), order.now())
        ? await orderUnderLock(order, name, async () =>
            deps.acme.issue(await accountKeyOf(order, name), [name], 'dns-01'),
          )
        : false;
      await warnIfExpiring(order, name);
      const current = await deps.store.find(name);
      let loaded = false;
      if (deps.caddy && current?.certificatePem && current.privateKeyPem) {
        loaded = await deps.caddy.load(current.certificatePem, current.privateKeyPem);
        await deps.caddy.ensureHttps();
      }
      return { issued, loaded };
    },
  };
}
