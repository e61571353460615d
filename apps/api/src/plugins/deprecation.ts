import type { FastifyInstance } from 'fastify';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Marks a route for removal (docs/versioning.md): its responses carry `Deprecation` (RFC 9745)
     * and `Sunset` (RFC 8594) headers and the OpenAPI document flags the operation as deprecated.
     */
    deprecated?: RouteDeprecation;
  }
}

export interface RouteDeprecation {
  /** When the route became deprecated (ISO 8601). */
  since: string;
  /** When it stops working (ISO 8601); at least the notice period of docs/versioning.md after `since`. */
  sunset: string;
  /** Where the replacement is described. */
  link?: string;
}

/** The response headers of a deprecated route. */
export function deprecationHeaders(deprecation: RouteDeprecation): Record<string, string> {
  const since = Date.parse(deprecation.since);
  const sunset = Date.parse(deprecation.sunset);
  if (Number.isNaN(since) || Number.isNaN(sunset))
    throw new Error(`invalid deprecation dates: ${JSON.stringify(deprecation)}`);
  return {
    deprecation: `@${Math.floor(since / 1000)}`,
    sunset: new Date(sunset).toUTCString(),
    ...(deprecation.link ? { link: `<${deprecation.link}>; rel="deprecation"` } : {}),
  };
}

/** Adds the headers to every response of a route whose config declares `deprecated`. */
export function registerDeprecationHeaders(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    // Fail at boot, not on the first request, when the dates do not parse.
    if (route.config?.deprecated) deprecationHeaders(route.config.deprecated);
  });
  app.addHook('onSend', async (request, reply, payload) => {
    const deprecation = request.routeOptions.config.deprecated;
    if (deprecation) reply.headers(deprecationHeaders(deprecation));
    return payload;
  });
}
