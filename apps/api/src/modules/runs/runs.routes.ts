import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { LIMITS } from '@hostctl/domain';
import { principalOf } from '../../plugins/access.js';
import { IdParams, problemResponses } from '../../http/schemas.js';
import { streamOverSocket } from '../../live/socket-stream.js';
import type { StreamGuard } from '../../live/stream-guard.js';
import type { RunOutputService } from './run-output.service.js';
import type { RunsService } from './runs.service.js';
import {
  Run,
  RunList,
  RunListQuery,
  RunOutput,
  RunOutputQuery,
  RunQuery,
  RunRequest,
} from './runs.schemas.js';

/**
 * One-off runs (docs/jobs.md). Every route needs `services:operate`, reads included: a run's
 * output is whatever the command printed (a migration's, a console's), so a viewer never sees it.
 * A deploy token reaches them only when it holds the `operate` action.
 */
export function registerRunRoutes(
  instance: FastifyInstance,
  service: RunsService,
  output: RunOutputService,
  guard: StreamGuard,
): void {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();

  app.post('/api/services/:id/runs', {
    config: { permission: 'services:operate', keyAction: 'operate' },
    schema: {
      params: IdParams,
      body: RunRequest,
      response: { 202: Run, ...problemResponses(400, 404, 409) },
    },
    handler: async (request, reply) => {
      const run = await service.create(principalOf(request), request.params.id, request.body);
      return reply.code(202).send(run);
    },
  });

  app.get('/api/services/:id/runs', {
    config: { permission: 'services:operate', keyAction: 'operate' },
    schema: {
      params: IdParams,
      querystring: RunListQuery,
      response: { 200: RunList, ...problemResponses(400, 404) },
    },
    handler: (request) =>
      service.history(principalOf(request), request.params.id, {
        page: request.query.page ?? 1,
        perPage: request.query.per_page ?? LIMITS.perPageDefault,
      }),
  });

  app.get('/api/runs/:id', {
    config: { permission: 'services:operate', keyAction: 'operate' },
    schema: {
      params: IdParams,
      querystring: RunQuery,
      response: { 200: Run, ...problemResponses(400, 404) },
    },
    handler: async (request) => {
      const controller = new AbortController();
      request.raw.once('close', () => controller.abort());
      return service.get(principalOf(request), request.params.id, {
        ...(request.query.wait !== undefined ? { waitSeconds: request.query.wait } : {}),
        signal: controller.signal,
      });
    },
  });

  // The output as it is printed (docs/jobs.md#following-a-run); follow=true upgrades to a WebSocket,
  // re-checked like the log stream's, so a revoked key or a lost role ends it.
  app.route({
    method: 'GET',
    url: '/api/runs/:id/output',
    config: { permission: 'services:operate', keyAction: 'operate' },
    schema: {
      params: IdParams,
      querystring: RunOutputQuery,
      response: { 200: RunOutput, ...problemResponses(400, 404) },
    },
    handler: (request) => output.snapshot(principalOf(request), request.params.id),
    wsHandler: (socket, request) => {
      const { id } = request.params;
      streamOverSocket(
        socket,
        request,
        (emit, signal) => output.follow(principalOf(request), id, emit, signal),
        {
          everyMs: guard.recheckMs,
          check: guard.checkFor(request, (principal) => output.visibleOr404(principal, id)),
        },
      );
    },
  });
}
