import { readFileSync } from 'node:fs';
import type { WorkerConfig } from '@hostctl/config';
import {
  createAcmeDnsChallengesStore,
  createCustomDomainsStore,
  createTlsCertificatesStore,
  type AdvisoryLocks,
  type Db,
} from '@hostctl/db';
import type { Logger } from 'pino';
import { messageOf } from '../pipeline/step-errors.js';
import { createAcmeClient } from './acme-client.js';
import { createAcmeHttp } from './acme-http.js';
import { createCaddyChallenges } from './caddy-challenges.js';
import { createCaddyTls } from './caddy-tls.js';
import { createChallengeSweep } from './challenge-sweep.js';
import { createCertificateKeeper, wildcardName, type KeeperOutcome } from './certificate-keeper.js';
import { createDomainCertificates, type DomainRound } from './domain-certificates.js';
import { createPowerDnsChallenges } from './powerdns-challenges.js';
import { recordDnsChallenges } from './recorded-dns-challenges.js';

type TlsConfig = Pick<
  WorkerConfig,
  | 'ACME_DIRECTORY_URL'
  | 'ACME_CA_CERT_FILE'
  | 'APPS_DOMAIN'
  | 'CADDY_ADMIN_URL'
  | 'CADDY_HTTPS_LISTEN'
  | 'CADDY_SERVER_NAME'
  | 'PDNS_API_URL'
  | 'PDNS_API_KEY'
  | 'PDNS_ZONE'
  | 'QUEUE_PREFIX'
  | 'TLS_CHECK_INTERVAL_MS'
  | 'PLATFORM_NOTIFICATIONS_CUSTOMER_ID'
>;

export interface Certificates {
  /** The wildcard's round: order when due (one replica at a time), load into Caddy. Null when TLS is off. */
  runOnce(): Promise<KeeperOutcome | null>;
  /** The custom domains' round (http-01 through Caddy); null when TLS is off. */
  runDomainsOnce(): Promise<DomainRound | null>;
  /** Removes challenge routes and dns-01 values left by an interrupted order (challenge-sweep.ts). */
  sweepChallengesOnce(): Promise<string[]>;
  start(): void;
  stop(): Promise<void>;
}

/**
 * The wildcard certificate of APPS_DOMAIN when ACME_DIRECTORY_URL is set (docs/tls.md): DNS-01
 * through the platform's PowerDNS, so DNS_PROVIDER=powerdns is what makes it possible; then one
 * certificate per verified custom domain through http-01 answered by Caddy. Off otherwise: the
 * platform then serves plain HTTP as before.
 */
export function createCertificates(
  config: TlsConfig,
  deps: { db: Db; locks: AdvisoryLocks; logger: Logger },
): Certificates {
  if (config.ACME_DIRECTORY_URL === '') {
    return {
      runOnce: async () => null,
      runDomainsOnce: async () => null,
      sweepChallengesOnce: async () => [],
      start() {},
      async stop() {},
    };
  }
  const hasCaddy = config.CADDY_ADMIN_URL !== '';
  const caddySettings = {
    adminUrl: config.CADDY_ADMIN_URL,
    serverName: config.CADDY_SERVER_NAME,
    instance: config.QUEUE_PREFIX,
  };
  const store = createTlsCertificatesStore(deps.db, {
    platformCustomerId: config.PLATFORM_NOTIFICATIONS_CUSTOMER_ID,
  });
  const challenges = hasCaddy ? createCaddyChallenges(caddySettings) : undefined;
  const dns = recordDnsChallenges(
    createPowerDnsChallenges({
      apiUrl: config.PDNS_API_URL,
      apiKey: config.PDNS_API_KEY,
      zone: config.PDNS_ZONE || config.APPS_DOMAIN,
    }),
    createAcmeDnsChallengesStore(deps.db),
  );
  const sweep = createChallengeSweep({
    leftovers: challenges ? [dns, challenges] : [dns],
    locks: deps.locks,
    logger: deps.logger,
  });
  const acme = createAcmeClient({
    directoryUrl: config.ACME_DIRECTORY_URL,
    http: createAcmeHttp(
      config.ACME_CA_CERT_FILE === '' ? '' : readFileSync(config.ACME_CA_CERT_FILE, 'utf8'),
    ),
    dns,
    ...(challenges ? { challenges } : {}),
  });
  const caddy = hasCaddy
    ? { caddy: createCaddyTls({ ...caddySettings, httpsListen: config.CADDY_HTTPS_LISTEN }) }
    : {};
  const keeper = createCertificateKeeper({
    store,
    locks: deps.locks,
    acme,
    ...caddy,
    appsDomain: config.APPS_DOMAIN,
    logger: deps.logger,
  });
  const domains = createDomainCertificates({
    store,
    domains: createCustomDomainsStore(deps.db),
    locks: deps.locks,
    acme,
    ...caddy,
    accountName: wildcardName(config.APPS_DOMAIN),
    logger: deps.logger,
  });
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;
  // A round still ordering (a slow CA) is not joined by the next tick.
  const round = () => {
    running ??= keeper
      .runOnce()
      // The wildcard first: it makes the ACME account the domains' orders use.
      .then(() => domains.runOnce())
      // After the domains' orders, so this replica's own finished ones are gone already.
      .then(() => sweep.runOnce())
      .catch((error: unknown) => {
        deps.logger.warn({ err: messageOf(error) }, 'tls: certificate round failed; the next one retries');
      })
      .finally(() => (running = undefined));
  };
  return {
    runOnce: () => keeper.runOnce(),
    runDomainsOnce: () => domains.runOnce(),
    sweepChallengesOnce: () => sweep.runOnce(),
    start() {
      round();
      timer = setInterval(round, config.TLS_CHECK_INTERVAL_MS);
      timer.unref();
    },
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
