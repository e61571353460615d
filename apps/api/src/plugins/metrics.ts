import type { FastifyInstance } from 'fastify';
import { Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Prometheus metrics of one API process: request latency by route template (never the raw URL:
 * ids would explode the label set), method and status, plus Node's process metrics. One registry
 * per container, so tests can build several apps in one process. `/metrics` is public like the
 * health endpoints and outside /api: keep it off the public edge (docs/operations.md).
 */
export function createApiMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const requestDuration = new Histogram({
    name: 'hostctl_http_request_duration_seconds',
    help: 'API request latency by route template, method and status code.',
    labelNames: ['route', 'method', 'status'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  return { registry, requestDuration };
}

export type ApiMetrics = ReturnType<typeof createApiMetrics>;

export function registerMetrics(app: FastifyInstance, metrics: ApiMetrics): void {
  app.addHook('onResponse', async (request, reply) => {
    metrics.requestDuration.observe(
      {
        route: request.routeOptions.url ?? 'unmatched',
        method: request.method,
        status: String(reply.statusCode),
      },
      reply.elapsedTime / 1000,
    );
  });

  app.get('/metrics', { config: { permission: 'public' } }, async (_request, reply) =>
    reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()),
  );
}
