import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { principalOf } from '../../plugins/access.js';
import { problemResponses } from '../../http/schemas.js';
import type { NodesService } from './nodes.service.js';
import { NodeList, NodeParams, SwarmNode } from './nodes.schemas.js';

/** /api/nodes (beyond the spec; docs/multi-host.md#nodes-api). */
export function registerNodeRoutes(instance: FastifyInstance, service: NodesService): void {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();

  app.get('/api/nodes', {
    config: { permission: 'nodes:read' },
    schema: { response: { 200: NodeList, ...problemResponses() } },
    handler: (request) => service.list(principalOf(request)),
  });
  app.get('/api/nodes/:id', {
    config: { permission: 'nodes:read' },
    schema: { params: NodeParams, response: { 200: SwarmNode, ...problemResponses(400, 404) } },
    handler: (request) => service.get(principalOf(request), request.params.id),
  });
  for (const [action, availability] of [
    ['drain', 'drain'],
    ['activate', 'active'],
  ] as const) {
    app.post(`/api/nodes/:id/${action}`, {
      config: { permission: 'nodes:manage' },
      schema: { params: NodeParams, response: { 202: SwarmNode, ...problemResponses(400, 404) } },
      handler: async (request, reply) =>
        reply
          .status(202)
          .send(await service.setAvailability(principalOf(request), request.params.id, availability)),
    });
  }
}
