/**
 * Where the reverse proxy sends a service's public traffic. The Caddy driver comes later; until
 * then the worker runs with the no-op router (CADDY_ADMIN_URL empty disables routing).
 */
export interface Route {
  serviceId: string;
  serviceName: string;
  url: string;
  target: { host: string; port: number };
}

export interface ServiceRouter {
  /** Idempotent: creating the same route twice leaves one route. */
  upsert(route: Route): Promise<void>;
  /** Idempotent: removing a missing route is success. */
  remove(serviceId: string): Promise<void>;
}

export const noopRouter: ServiceRouter = {
  async upsert() {},
  async remove() {},
};
