import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { principalOf } from '../../plugins/access.js';
import { IdParams, problemResponses } from '../../http/schemas.js';
import { streamOverSocket } from '../../live/socket-stream.js';
import type { StreamGuard } from '../../live/stream-guard.js';
import type { DeploymentsService } from './deployments.service.js';
import { Deployment, DeploymentQuery } from './deployments.schemas.js';

/**
 * GET /api/deployments/:id — the deployment behind a `deploy_job_id` (docs/deployments.md).
 * Plain GET answers JSON (`?wait=N` long-polls for the outcome); a WebSocket upgrade on the same
 * path streams `log`, `status` and a final `end` message.
 */
export function registerDeploymentRoutes(
  instance: FastifyInstance,
  service: DeploymentsService,
  guard: StreamGuard,
): void {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();

  app.route({
    method: 'GET',
    url: '/api/deployments/:id',
    config: { permission: 'services:read' },
    schema: {
      params: IdParams,
      querystring: DeploymentQuery,
      response: { 200: Deployment, ...problemResponses(400, 404) },
    },
    handler: async (request) => {
      const controller = new AbortController();
      request.raw.once('close', () => controller.abort());
      return service.get(principalOf(request), request.params.id, {
        ...(request.query.wait !== undefined ? { waitSeconds: request.query.wait } : {}),
        ...(request.query.after_seq !== undefined ? { afterSeq: request.query.after_seq } : {}),
        signal: controller.signal,
      });
    },
    wsHandler: (socket, request) => {
      const { id } = request.params;
      streamOverSocket(
        socket,
        request,
        (emit, signal) => service.follow(principalOf(request), id, emit, signal),
        {
          everyMs: guard.recheckMs,
          check: guard.checkFor(request, (principal) => service.visibleOr404(principal, id)),
        },
      );
    },
  });
}
