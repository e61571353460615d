/**
 * Where the reverse proxy sends a service's public traffic. With CADDY_ADMIN_URL set the worker
 * uses the Caddy routes plus the DNS provider (network/service-publisher.ts); without it, the
 * no-op router (routing is someone else's business, e.g. in unit tests).
 */
export interface Route {
  serviceId: string;
  serviceName: string;
  url: string;
  /**
   * Where the traffic goes: the web container (single engine), or every running task's published
   * port (Swarm); the proxy balances over them and retries another when one refuses a connection.
   */
  targets: RouteTarget[];
  /**
   * The previous release's addresses while it drains: they get no new request, but the proxy keeps
   * counting the requests still in flight to them (inFlight), which is how a drain knows it is over.
   */
  draining?: RouteTarget[];
}

export interface RouteTarget {
  host: string;
  port: number;
}

/** host:port as a dial address (IPv6 hosts bracketed). */
export const dialAddress = (target: RouteTarget) =>
  `${target.host.includes(':') ? `[${target.host}]` : target.host}:${target.port}`;

/** Several dial addresses as one comparable string: sorted, comma-separated. */
export const upstreamKey = (targets: RouteTarget[]) => dialList(targets.map(dialAddress));
export const dialList = (dials: string[]) => [...dials].sort().join(',');

export interface RoutedService {
  serviceId: string;
  /** host:port the proxy currently sends the service's traffic to (several: upstreamKey). */
  upstream: string;
  /**
   * The route is there but something published with it is not (a DNS record, or the proxy settings
   * of a route an older version installed): apply it again.
   */
  incomplete?: boolean;
}

export interface ServiceRouter {
  /**
   * Idempotent: creating the same route twice leaves one route. May return notes for the
   * deployment log (e.g. a custom domain that could not be published in DNS).
   */
  upsert(route: Route): Promise<string[] | void>;
  /** Idempotent: removing a missing route is success. */
  remove(serviceId: string): Promise<void>;
  /** This installation's routes, for the reconciler; routers without state omit it. */
  list?(): Promise<RoutedService[]>;
  /**
   * Requests the proxy has in flight to these addresses (a route's `draining` ones included);
   * routers that cannot tell omit it, and a drain then lasts its longest window.
   */
  inFlight?(targets: RouteTarget[]): Promise<number>;
}

export const noopRouter: ServiceRouter = {
  async upsert() {},
  async remove() {},
};
