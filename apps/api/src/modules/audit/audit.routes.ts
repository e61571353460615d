import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { problemResponses } from '../../http/schemas.js';
import { principalOf } from '../../plugins/access.js';
import { AuditEventList, AuditEventsQuery } from './audit.schemas.js';
import type { AuditService } from './audit.service.js';

/** GET /api/audit-events: the audit log, newest first, paginated and filterable (docs/audit.md). */
export function registerAuditRoutes(instance: FastifyInstance, service: AuditService): void {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();

  app.get('/api/audit-events', {
    config: { permission: 'audit:read' },
    schema: {
      querystring: AuditEventsQuery,
      response: { 200: AuditEventList, ...problemResponses(400) },
    },
    handler: (request) => service.list(principalOf(request), request.query),
  });
}
