/**
 * Where the reverse proxy sends a service's public traffic. With CADDY_ADMIN_URL set the worker
 * uses the Caddy routes plus the DNS provider (network/service-publisher.ts); without it, the
 * no-op router (routing is someone else's business, e.g. in unit tests).
 */
export interface Route {
  serviceId: string;
  serviceName: string;
  url: string;
  target: { host: string; port: number };
}

export interface RoutedService {
  serviceId: string;
  /** host:port the proxy currently sends the service's traffic to. */
  upstream: string;
  /** The route is there but something published with it is not (a DNS record): apply it again. */
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
}

export const noopRouter: ServiceRouter = {
  async upsert() {},
  async remove() {},
};
