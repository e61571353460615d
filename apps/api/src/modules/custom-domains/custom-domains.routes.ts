import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { principalOf } from '../../plugins/access.js';
import { IdParams, problemResponses } from '../../http/schemas.js';
import { CustomDomainItem, CustomDomainList, DomainParams } from './custom-domains.schemas.js';
import type { CustomDomainsService } from './custom-domains.service.js';

/** Custom-domain ownership (docs/tls.md#custom-domains): read like the service, checked like a change to it. */
export function registerCustomDomainRoutes(instance: FastifyInstance, service: CustomDomainsService): void {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();

  app.get('/api/services/:id/custom-domains', {
    config: { permission: 'services:read' },
    schema: { params: IdParams, response: { 200: CustomDomainList, ...problemResponses(404) } },
    handler: (request) => service.list(principalOf(request), request.params.id),
  });

  app.post('/api/services/:id/custom-domains/:domain/verify', {
    config: { permission: 'services:operate', keyAction: 'manage' },
    schema: { params: DomainParams, response: { 200: CustomDomainItem, ...problemResponses(400, 404, 409) } },
    handler: (request) => service.verify(principalOf(request), request.params.id, request.params.domain),
  });
}
