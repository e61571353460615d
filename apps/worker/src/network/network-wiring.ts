import type { WorkerConfig } from '@hostctl/config';
import type { CustomDomainsStore } from '@hostctl/db';
import type { Logger } from 'pino';
import { createCaddyRoutes, type CaddyRoutes } from '../adapters/caddy-routes.js';
import { noDns } from '../adapters/dns-provider.js';
import { createPowerDnsProvider } from '../adapters/powerdns-provider.js';
import { noopRouter, type ServiceRouter } from '../adapters/router.js';
import { httpsListener } from './route-https.js';
import { createServicePublisher } from './service-publisher.js';
import type { ZoneWriteGate } from './zone-writes.js';

/**
 * The router the configuration asks for: Caddy routes when CADDY_ADMIN_URL is set, PowerDNS
 * records when DNS_PROVIDER=powerdns (zone lookups happen per name, so PDNS_ZONE is only the
 * documented home of `<name>.<APPS_DOMAIN>`), the no-op router when neither is configured.
 */
const noRoutes: CaddyRoutes = {
  async apply() {},
  async remove() {},
  async list() {
    return [];
  },
  // Never asked: without Caddy the router below does not offer inFlight.
  async inFlight() {
    return 0;
  },
};

export function createNetworkRouter(
  config: WorkerConfig,
  logger: Logger,
  domains: Pick<CustomDomainsStore, 'routableDomains' | 'httpsOptions'>,
  zoneWriteGate: ZoneWriteGate,
): ServiceRouter {
  const hasCaddy = config.CADDY_ADMIN_URL !== '';
  const hasDns = config.DNS_PROVIDER === 'powerdns';
  if (!hasCaddy && !hasDns) return noopRouter;
  const publisher = createServicePublisher({
    routes: hasCaddy
      ? createCaddyRoutes({
          adminUrl: config.CADDY_ADMIN_URL,
          serverName: config.CADDY_SERVER_NAME,
          instance: config.QUEUE_PREFIX,
        })
      : noRoutes,
    dns: hasDns
      ? createPowerDnsProvider({
          apiUrl: config.PDNS_API_URL,
          apiKey: config.PDNS_API_KEY,
          publicIp: config.PUBLIC_IP,
          zoneWriteGate,
        })
      : noDns,
    appsDomain: config.APPS_DOMAIN,
    // Only domains whose owner proved them (docs/tls.md#custom-domains): never a name merely claimed.
    customDomains: (ids) => domains.routableDomains(ids),
    httpsOptions: (ids) => domains.httpsOptions(ids),
    https: httpsListener(config.ACME_DIRECTORY_URL, config.CADDY_HTTPS_LISTEN),
    logger,
  });
  // Without Caddy there are no routes to list: the reconciler must not treat every service as unrouted.
  return hasCaddy
    ? publisher
    : { upsert: (route) => publisher.upsert(route), remove: (id) => publisher.remove(id) };
}
