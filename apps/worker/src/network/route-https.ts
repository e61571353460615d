import type { ServiceHttps } from '@hostctl/db';
import type { RouteHttps } from '../adapters/caddy-routes.js';

/** HTTPS as the worker is configured: on when there is a CA and an HTTPS listener. */
export interface HttpsListener {
  enabled: boolean;
  port: number;
}

/** From ACME_DIRECTORY_URL and CADDY_HTTPS_LISTEN (`127.0.0.1:443`, `:8443`…). */
export function httpsListener(acmeDirectoryUrl: string, httpsListen: string): HttpsListener {
  const port = Number(/:(\d+)$/.exec(httpsListen)?.[1] ?? 443);
  return { enabled: acmeDirectoryUrl !== '' && httpsListen !== '', port };
}

/**
 * A route's redirect and HSTS (docs/tls.md#https-and-plain-http), or undefined for a route that
 * proxies every request as it comes (HTTPS off, or the service opted out of both). The redirect
 * covers the names that answer HTTPS: the apps name (the wildcard) and the custom domains whose
 * certificate exists; a verified domain still waiting for its certificate keeps plain HTTP.
 */
export function routeHttps(
  listener: HttpsListener,
  hosts: readonly string[],
  appsDomain: string,
  service: ServiceHttps | undefined,
): RouteHttps | undefined {
  if (!listener.enabled || !service) return undefined;
  const suffix = `.${appsDomain.toLowerCase()}`;
  const certified = new Set(service.certifiedDomains);
  const redirectHosts = service.redirect
    ? hosts.filter((host) => host.endsWith(suffix) || certified.has(host))
    : [];
  if (redirectHosts.length === 0 && service.hstsMaxAge === null) return undefined;
  return { redirectHosts, httpsPort: listener.port, hstsMaxAge: service.hstsMaxAge };
}

/** Whether what Caddy has matches what the service wants (host order aside). */
export function sameHttps(current: RouteHttps | undefined, wanted: RouteHttps | undefined): boolean {
  if (!current || !wanted) return current === wanted;
  const hosts = (https: RouteHttps) => [...https.redirectHosts].sort().join(',');
  return (
    hosts(current) === hosts(wanted) &&
    current.hstsMaxAge === wanted.hstsMaxAge &&
    (current.redirectHosts.length === 0 || current.httpsPort === wanted.httpsPort)
  );
}
