import type { Logger } from 'pino';
import type { ServiceHttps } from '@hostctl/db';
import type { CaddyRoutes } from '../adapters/caddy-routes.js';
import type { DnsProvider } from '../adapters/dns-provider.js';
import { dialAddress, dialList, type RoutedService, type ServiceRouter } from '../adapters/router.js';
import { messageOf } from '../pipeline/step-errors.js';
import { routeHttps, sameHttps, type HttpsListener } from './route-https.js';

/**
 * Makes a service reachable under its public names: the proxy route and the DNS records, as one
 * ServiceRouter so every caller (the deploy's `route` step, the reconciler's restores, delete)
 * keeps both in step. Host names are `<name>.<APPS_DOMAIN>` plus the service's custom domains,
 * read from the database at each call, so a caller can never drop a domain by not knowing it.
 */
export interface PublisherDeps {
  routes: CaddyRoutes;
  dns: DnsProvider;
  appsDomain: string;
  /** Current routable (verified) custom domains of each service; a service without any is absent. */
  customDomains(serviceIds: readonly string[]): Promise<Map<string, string[]>>;
  /** Each service's redirect/HSTS settings and its custom domains that have a certificate. */
  httpsOptions(serviceIds: readonly string[]): Promise<Map<string, ServiceHttps>>;
  https: HttpsListener;
  logger: Logger;
}

export function createServicePublisher(deps: PublisherDeps): ServiceRouter {
  return {
    async upsert(route) {
      const domains = (await deps.customDomains([route.serviceId])).get(route.serviceId) ?? [];
      const hosts = [
        ...new Set([`${route.serviceName}.${deps.appsDomain}`, ...domains].map((h) => h.toLowerCase())),
      ];
      const https = routeHttps(
        deps.https,
        hosts,
        deps.appsDomain,
        (await deps.httpsOptions([route.serviceId])).get(route.serviceId),
      );
      await deps.routes.apply({
        serviceId: route.serviceId,
        hosts,
        upstreams: route.targets.map(dialAddress),
        ...(route.draining?.length ? { draining: route.draining.map(dialAddress) } : {}),
        ...(https ? { https } : {}),
      });
      const report = await deps.dns.upsertRecords(route.serviceId, hosts);
      const notes = report.skipped.map(({ name, reason }) => `DNS: ${name} not published: ${reason}`);
      for (const note of notes) deps.logger.info({ serviceId: route.serviceId }, note);
      return notes;
    },

    inFlight: (targets) => deps.routes.inFlight(targets.map(dialAddress)),

    async remove(serviceId) {
      await deps.routes.remove(serviceId);
      await deps.dns.removeRecords(serviceId);
    },

    /**
     * Routes, each marked incomplete when its names lack the DNS records the deploy made, when
     * an older version installed it without what the proxy now adds (HOST_ONLY_COOKIES), or when
     * its custom domains are not the verified ones (a domain verified or dropped since the deploy),
     * or its redirect/HSTS are not what the service asks (changed, or a domain's certificate came).
     */
    async list(): Promise<RoutedService[]> {
      const routes = await deps.routes.list();
      const ids = routes.map((route) => route.serviceId);
      const verified = await deps.customDomains(ids);
      const https = await deps.httpsOptions(ids);
      const stale = new Set(
        routes
          .filter(
            ({ serviceId, hosts, https: current }) =>
              !sameDomains(hosts, verified.get(serviceId) ?? [], deps.appsDomain) ||
              !sameHttps(current, routeHttps(deps.https, hosts, deps.appsDomain, https.get(serviceId))),
          )
          .map((route) => route.serviceId),
      );
      const wanted = routes.map(({ serviceId, hosts }) => ({ serviceId, names: hosts }));
      // The DNS server being down must not stop the repair of routes: records wait for the next sweep.
      let missing = new Set<string>();
      try {
        missing = (await deps.dns.findMissing?.(wanted)) ?? missing;
      } catch (error) {
        deps.logger.warn({ err: messageOf(error) }, 'could not check DNS records; next sweep retries');
      }
      return routes.map(({ serviceId, upstreams, outdated }) => ({
        serviceId,
        upstream: dialList(upstreams),
        ...(missing.has(serviceId) || stale.has(serviceId) || outdated === true ? { incomplete: true } : {}),
      }));
    },
  };
}

/** Whether a route's hosts other than its apps name are exactly these domains. */
function sameDomains(hosts: readonly string[], domains: readonly string[], appsDomain: string): boolean {
  const suffix = `.${appsDomain.toLowerCase()}`;
  const routed = new Set(hosts.map((host) => host.toLowerCase()).filter((host) => !host.endsWith(suffix)));
  const wanted = new Set(domains.map((domain) => domain.toLowerCase()));
  return routed.size === wanted.size && [...wanted].every((domain) => routed.has(domain));
}
