import { isIP } from 'node:net';
import { normalizeHost } from './allowed-hosts.js';
import { nonPublicKind } from './ip-ranges.js';

/**
 * The control plane's own endpoints (database, Redis, Caddy admin, PowerDNS API, the API, the OIDC
 * issuer, the worker's health port, a Docker TCP socket) are never a git or registry target, even
 * when an allowlist entry's range covers them: a registry pull or clone aimed there turns the
 * engine or git into a client of an admin API whose reply ends up in a tenant's deploy log.
 * An endpoint on a local address (loopback, unspecified, `localhost`) is refused on *every* local
 * address, since 127.0.0.2 or 0.0.0.0 reach a service bound to 0.0.0.0 or 127.0.0.0/8 alike.
 */
export interface Endpoint {
  host: string;
  port: number;
}

/**
 * Well-known ports of the stack, refused on local addresses whatever the configuration says: the
 * API does not know the worker's Caddy/PowerDNS URLs (and vice versa), yet both must agree.
 * Caddy admin, PowerDNS API, PostgreSQL, Redis, the API, the dev OIDC provider, Docker TCP.
 */
export const WELL_KNOWN_CONTROL_PORTS = [2019, 8081, 5432, 6379, 3000, 3100, 2375, 2376];

const DEFAULT_PORTS: Record<string, number> = {
  'http:': 80,
  'https:': 443,
  'postgres:': 5432,
  'postgresql:': 5432,
  'redis:': 6379,
  'rediss:': 6379,
};

/** Endpoints out of connection URLs (unparseable or empty ones are skipped) and bare local ports. */
export function protectedEndpoints(
  urls: readonly (string | undefined)[],
  localPorts: readonly number[] = [],
) {
  const endpoints: Endpoint[] = WELL_KNOWN_CONTROL_PORTS.map((port) => ({ host: '127.0.0.1', port }));
  for (const port of localPorts) if (port > 0) endpoints.push({ host: '127.0.0.1', port });
  for (const raw of urls) {
    if (!raw) continue;
    try {
      const url = new URL(raw);
      const port = url.port ? Number(url.port) : DEFAULT_PORTS[url.protocol];
      if (port && url.hostname) endpoints.push({ host: normalizeHost(url.hostname), port });
    } catch {
      // Not a URL (config validation reports it elsewhere): nothing to protect here.
    }
  }
  return endpoints;
}

export function isLocalHost(host: string): boolean {
  const normal = normalizeHost(host);
  if (normal === 'localhost' || normal.endsWith('.localhost')) return true;
  if (isIP(normal) === 0) return false;
  const kind = nonPublicKind(normal);
  return kind === 'loopback' || kind === 'unspecified';
}

/** The endpoint `host:port` is, or null. */
export function protectedEndpointAt(
  host: string,
  port: number,
  endpoints: readonly Endpoint[],
): Endpoint | null {
  const target = normalizeHost(host);
  const isLocal = isLocalHost(target);
  return (
    endpoints.find(
      (endpoint) =>
        endpoint.port === port && (endpoint.host === target || (isLocal && isLocalHost(endpoint.host))),
    ) ?? null
  );
}
