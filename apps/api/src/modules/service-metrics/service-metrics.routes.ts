import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { IdParams, problemResponses } from '../../http/schemas.js';
import { principalOf } from '../../plugins/access.js';
import { MetricsQuery, ServiceMetrics } from './service-metrics.schemas.js';
import type { ServiceMetricsService } from './service-metrics.service.js';

/** A service's resource history (docs/health-and-resources.md#history), read like its detail. */
export function registerServiceMetricsRoutes(
  instance: FastifyInstance,
  service: ServiceMetricsService,
): void {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();

  app.get('/api/services/:id/metrics', {
    config: { permission: 'services:read' },
    schema: {
      params: IdParams,
      querystring: MetricsQuery,
      response: { 200: ServiceMetrics, ...problemResponses(400, 404) },
    },
    handler: (request) => service.series(principalOf(request), request.params.id, request.query),
  });
}
