import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { IdParams, problemResponses } from '../../http/schemas.js';
import { principalOf } from '../../plugins/access.js';
import { UsageQuery, UsageReport } from './usage.schemas.js';
import type { UsageService } from './usage.service.js';

/** A customer's metered usage, as JSON pages or one CSV export (docs/metering.md#api). */
export function registerUsageRoutes(instance: FastifyInstance, service: UsageService): void {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();

  app.get('/api/customers/:id/usage', {
    config: { permission: 'customers:read' },
    schema: {
      params: IdParams,
      querystring: UsageQuery,
      response: {
        // format=csv: the text/csv export (a string is sent as it is, never through a serializer).
        200: Type.Union([UsageReport, Type.String({ description: 'format=csv: text/csv' })]),
        ...problemResponses(400, 404),
      },
    },
    handler: async (request, reply) => {
      const answer = await service.report(principalOf(request), request.params.id, request.query);
      if (answer.csv !== undefined) {
        return reply
          .type('text/csv; charset=utf-8')
          .header('content-disposition', `attachment; filename="usage-${request.params.id}.csv"`)
          .send(answer.csv);
      }
      return answer.json;
    },
  });
}
