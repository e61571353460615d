import { isDeepStrictEqual } from 'node:util';
import { DomainError } from '@hostctl/domain';
import { CaddyConnectionReset, createCaddyAdmin } from './caddy-admin.js';

/**
 * Service routes in Caddy, through its admin API (caddy-admin.ts). One route per service, `@id`
 * `hostctl-svc-<serviceId>`, inserted at the front of the server's route list (before the
 * catch-all 404), matching the service's host names and proxying to its web container. A `vars`
 * handler in front carries the installation and service id: several installations can share one
 * Caddy, and a reconciler only ever lists and removes routes of its own installation.
 * Caddy accepts duplicate ids, so an upsert checks `GET /id/…` first, and a removal deletes until
 * Caddy answers 404.
 */
export interface CaddyRoute {
  serviceId: string;
  hosts: string[];
  /**
   * host:port of the web container on its bridge network (the worker host reaches it), or of each
   * Swarm task's published port.
   */
  upstreams: string[];
  /**
   * The previous release's upstreams while it drains (Route.draining): never sent a request, only
   * kept known to Caddy so that its count of their requests in flight survives the switch.
   */
  draining?: string[];
  /** list(): installed by an older version without HOST_ONLY_COOKIES; the reconciler applies it again. */
  outdated?: boolean;
  /** Redirect and HSTS (docs/tls.md#https-and-plain-http); absent: the route proxies every request as is. */
  https?: RouteHttps;
}

/** A route's HTTPS behaviour, as network/route-https.ts computes it from the service. */
export interface RouteHttps {
  /** Hosts whose plain-HTTP requests answer 308 to HTTPS (they have a certificate); may be empty. */
  redirectHosts: string[];
  /** The HTTPS listener's port, in the Location when not 443. */
  httpsPort: number;
  /** Strict-Transport-Security max-age on HTTPS answers; null: no header. */
  hstsMaxAge: number | null;
}

/** Never redirected: a CA validating http-01 asks over plain HTTP (RFC 8555 §8.3). */
const ACME_HTTP01_PATHS = ['/.well-known/acme-challenge/*'];
const HSTS = 'Strict-Transport-Security';

export interface CaddyRoutes {
  apply(route: CaddyRoute): Promise<void>;
  remove(serviceId: string): Promise<void>;
  /** Routes of this installation currently in Caddy. */
  list(): Promise<CaddyRoute[]>;
  /** Requests Caddy is proxying to these upstreams now (GET /reverse_proxy/upstreams). */
  inFlight(upstreams: string[]): Promise<number>;
}

export interface CaddyOptions {
  adminUrl: string;
  serverName: string;
  instance: string;
  timeoutMs?: number;
}

export const routeId = (serviceId: string) => `hostctl-svc-${serviceId}`;

/**
 * Caddy retries a failed dial on another upstream for this long (only dial errors: nothing was
 * sent yet). Short: when every task is gone (a stopped service) a visitor waits this long for its 502.
 */
const RETRY_ANOTHER_UPSTREAM = { try_duration: '1s', try_interval: '20ms' };

/**
 * A tenant's answer may set cookies for its own host only. `Set-Cookie: …; Domain=<apps domain>`
 * from one app reached every other app and the dashboard on the same site: a tenant planted a
 * session there and the victim ended signed in as the attacker (issue 27). Caddy applies the
 * regular expression to every Set-Cookie value, so each loses its Domain attribute and becomes a
 * host-only cookie of the app that set it. RE2 syntax; case-insensitive like the attribute.
 */
export const HOST_ONLY_COOKIES = {
  response: { replace: { 'Set-Cookie': [{ search_regexp: '(?i);\\s*domain=[^;]*', replace: '' }] } },
};

interface HandlerJson {
  handler?: string;
  hostctl_instance?: string;
  hostctl_service?: string;
  upstreams?: { dial?: string }[];
  headers?: unknown;
  status_code?: number;
  response?: { set?: Record<string, string[]> };
  routes?: RouteJson[];
}

interface RouteJson {
  '@id'?: string;
  match?: { host?: string[] }[];
  handle?: HandlerJson[];
}

/**
 * Caddy counts a proxy's requests in flight per upstream, but forgets an upstream, count and all,
 * as soon as no handler names it: after the switch the previous release's requests would be
 * invisible (seen with Caddy 2.6: the old address left /reverse_proxy/upstreams while a request to
 * it was still running). A second proxy naming it keeps it known; it never runs, since the first
 * proxy answers every request and calls no handler after it. It stays until the route next
 * changes: removing it at once would cost a config reload, and a Caddy 2.6 reload resets a few
 * of the connections it is serving (seen: 14 resets in 60 reloads under two tight clients).
 */
function drainingHandler(draining: string[] | undefined): HandlerJson[] {
  if (!draining?.length) return [];
  return [{ handler: 'reverse_proxy', upstreams: draining.map((dial) => ({ dial })) }];
}

/**
 * The redirect and HSTS as a subroute between the marker and the proxy: the redirect answers
 * plain HTTP for the hosts that have a certificate, the ACME challenge path excepted; the HSTS
 * header is set on HTTPS requests only (RFC 6797 §7.2: never over plain HTTP).
 */
function httpsHandler(https: RouteHttps | undefined): HandlerJson[] {
  if (!https || (https.redirectHosts.length === 0 && https.hstsMaxAge === null)) return [];
  const port = https.httpsPort === 443 ? '' : `:${https.httpsPort}`;
  const routes: unknown[] = [];
  if (https.redirectHosts.length > 0)
    routes.push({
      match: [{ host: https.redirectHosts, protocol: 'http', not: [{ path: ACME_HTTP01_PATHS }] }],
      handle: [
        {
          handler: 'static_response',
          status_code: 308,
          headers: { Location: [`https://{http.request.host}${port}{http.request.uri}`] },
        },
      ],
    });
  if (https.hstsMaxAge !== null)
    routes.push({
      match: [{ protocol: 'https' }],
      handle: [{ handler: 'headers', response: { set: { [HSTS]: [`max-age=${https.hstsMaxAge}`] } } }],
    });
  return [{ handler: 'subroute', routes } as HandlerJson];
}

/** Reads back what httpsHandler wrote (the reconciler compares it with what the service wants). */
function readHttps(handlers: HandlerJson[] | undefined): RouteHttps | undefined {
  const routes = handlers?.find((handler) => handler.handler === 'subroute')?.routes ?? [];
  const redirect = routes.find((route) => route.handle?.[0]?.status_code === 308);
  const hsts = routes.find((route) => route.handle?.[0]?.handler === 'headers')?.handle?.[0]?.response?.set?.[
    HSTS
  ]?.[0];
  if (!redirect && !hsts) return undefined;
  const location = String(
    (redirect?.handle?.[0]?.headers as { Location?: string[] } | undefined)?.Location?.[0] ?? '',
  );
  return {
    redirectHosts: redirect?.match?.[0]?.host ?? [],
    httpsPort: Number(/\}:(\d+)\{/.exec(location)?.[1] ?? 443),
    hstsMaxAge: hsts ? Number(/max-age=(\d+)/.exec(hsts)?.[1] ?? 0) : null,
  };
}

const INSERT_TRIES = 3;

export function createCaddyRoutes(options: CaddyOptions): CaddyRoutes {
  const routesPath = `/config/apps/http/servers/${encodeURIComponent(options.serverName)}/routes`;
  const admin = createCaddyAdmin(options.adminUrl, { timeoutMs: options.timeoutMs });
  const { call } = admin;
  const expectOk = (result: { status: number; text: string }, what: string) => {
    if (result.status >= 300)
      throw new DomainError(
        'runtime_error',
        `Caddy refused to ${what}: ${result.status} ${result.text.slice(0, 300)}`,
      );
  };

  return {
    async apply(route) {
      const id = routeId(route.serviceId);
      const body: RouteJson & { terminal: boolean } = {
        '@id': id,
        match: [{ host: route.hosts }],
        handle: [
          { handler: 'vars', hostctl_instance: options.instance, hostctl_service: route.serviceId },
          ...httpsHandler(route.https),
          {
            handler: 'reverse_proxy',
            upstreams: route.upstreams.map((dial) => ({ dial })),
            headers: HOST_ONLY_COOKIES,
            // Several upstreams (Swarm tasks): one that refuses the connection (a task stopped
            // during an update, before the route follows) is retried on another, not a 502.
            ...(route.upstreams.length > 1 ? { load_balancing: RETRY_ANOTHER_UPSTREAM } : {}),
          },
          ...drainingHandler(route.draining),
        ],
        terminal: true,
      };
      for (let tries = 1; ; tries += 1) {
        const existing = await call('GET', `/id/${id}`);
        if (existing.status === 200)
          return expectOk(await call('PATCH', `/id/${id}`, body), `update route ${id}`);
        if (existing.status !== 404) expectOk(existing, `read route ${id}`);
        try {
          return expectOk(await call('PUT', `${routesPath}/0`, body), `add route ${id}`);
        } catch (error) {
          // An insert cut off may have landed: read again rather than insert a duplicate.
          if (!(error instanceof CaddyConnectionReset) || tries >= INSERT_TRIES) throw error;
        }
      }
    },

    async remove(serviceId) {
      await admin.removeId(routeId(serviceId));
    },

    async inFlight(upstreams) {
      const result = await call('GET', '/reverse_proxy/upstreams');
      expectOk(result, 'report its upstreams');
      const known = (JSON.parse(result.text) as { address?: string; num_requests?: number }[] | null) ?? [];
      const wanted = new Set(upstreams);
      return known.reduce(
        (sum, upstream) =>
          sum + (upstream.address && wanted.has(upstream.address) ? (upstream.num_requests ?? 0) : 0),
        0,
      );
    },

    async list() {
      const result = await call('GET', routesPath);
      if (result.status === 404 || result.status === 400) return [];
      expectOk(result, 'list routes');
      const routes = (JSON.parse(result.text) as RouteJson[] | null) ?? [];
      return routes.flatMap((route): CaddyRoute[] => {
        const marker = route.handle?.find((handler) => handler.handler === 'vars');
        // The first proxy serves; a second one is a drain's (drainingHandler), never run, left in
        // place until the route's next change: not worth a reload of its own.
        const proxy = route.handle?.find((handler) => handler.handler === 'reverse_proxy');
        if (marker?.hostctl_instance !== options.instance || !marker.hostctl_service) return [];
        if (route['@id'] !== routeId(marker.hostctl_service)) return [];
        const https = readHttps(route.handle);
        return [
          {
            serviceId: marker.hostctl_service,
            hosts: route.match?.[0]?.host ?? [],
            upstreams: (proxy?.upstreams ?? []).flatMap((upstream) => (upstream.dial ? [upstream.dial] : [])),
            ...(isDeepStrictEqual(proxy?.headers, HOST_ONLY_COOKIES) ? {} : { outdated: true }),
            ...(https ? { https } : {}),
          },
        ];
      });
    },
  };
}
