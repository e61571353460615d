import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { LIMITS } from '@hostctl/domain';
import { principalOf } from '../../plugins/access.js';
import { IdParams, problemResponses } from '../../http/schemas.js';
import { streamOverSocket } from '../../live/socket-stream.js';
import type { StreamGuard } from '../../live/stream-guard.js';
import type { DeploymentsService } from './deployments.service.js';
import { Deployment, DeploymentList, DeploymentListQuery, DeploymentQuery } from './deployments.schemas.js';

/**
 * GET /api/deployments/:id — the deployment behind a `deploy_job_id` (docs/deployments.md).
 * Plain GET answers JSON (`?wait=N` long-polls for the outcome); a WebSocket upgrade on the same
 * path streams `log`, `status` and a final `end` message. Also a service's deployment history and
 * cancel.
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

  app.get('/api/services/:id/deployments', {
    config: { permission: 'services:read' },
    schema: {
      params: IdParams,
      querystring: DeploymentListQuery,
      response: { 200: DeploymentList, ...problemResponses(400, 404) },
    },
    handler: (request) =>
      service.history(principalOf(request), request.params.id, {
        page: request.query.page ?? 1,
        perPage: request.query.per_page ?? LIMITS.perPageDefault,
      }),
  });

  // Same permission as redeploy: stopping a release is operating the service.
  app.post('/api/deployments/:id/cancel', {
    config: { permission: 'services:operate' },
    schema: { params: IdParams, response: { 200: Deployment, ...problemResponses(404, 409) } },
    handler: (request) => service.cancel(principalOf(request), request.params.id),
  });
}
