import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { LIMITS } from '@hostctl/domain';
import { principalOf } from '../../plugins/access.js';
import { IdParams, problemResponses } from '../../http/schemas.js';
import { Run, RunList } from '../runs/runs.schemas.js';
import type { SchedulesService } from './schedules.service.js';
import {
  Schedule,
  ScheduleCreate,
  ScheduleList,
  SchedulePatch,
  ScheduleRunsQuery,
} from './schedules.schemas.js';

/**
 * Scheduled jobs (docs/jobs.md#schedules), shaped like runs and backups: created and listed under
 * their service, then reached by their own id. Every route needs `services:operate`, reads
 * included, as runs do: a schedule's command and its runs' output are an operator's business. A
 * deploy token reaches them only when it holds the `operate` action.
 */
export function registerScheduleRoutes(instance: FastifyInstance, service: SchedulesService): void {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  const operate = { permission: 'services:operate', keyAction: 'operate' } as const;

  app.get('/api/services/:id/schedules', {
    config: operate,
    schema: { params: IdParams, response: { 200: ScheduleList, ...problemResponses(404) } },
    handler: (request) => service.list(principalOf(request), request.params.id),
  });

  app.post('/api/services/:id/schedules', {
    config: { ...operate, idempotent: true },
    schema: {
      params: IdParams,
      body: ScheduleCreate,
      response: { 201: Schedule, ...problemResponses(400, 404, 409) },
    },
    handler: async (request, reply) =>
      reply.code(201).send(await service.create(principalOf(request), request.params.id, request.body)),
  });

  app.get('/api/schedules/:id', {
    config: operate,
    schema: { params: IdParams, response: { 200: Schedule, ...problemResponses(404) } },
    handler: (request) => service.get(principalOf(request), request.params.id),
  });

  app.patch('/api/schedules/:id', {
    config: operate,
    schema: {
      params: IdParams,
      body: SchedulePatch,
      response: { 200: Schedule, ...problemResponses(400, 404, 409) },
    },
    handler: (request) => service.update(principalOf(request), request.params.id, request.body),
  });

  app.delete('/api/schedules/:id', {
    config: operate,
    schema: { params: IdParams, response: { 204: Type.Null(), ...problemResponses(404) } },
    handler: async (request, reply) => {
      await service.remove(principalOf(request), request.params.id);
      return reply.code(204).send(null);
    },
  });

  app.post('/api/schedules/:id/run-now', {
    config: operate,
    schema: { params: IdParams, response: { 202: Run, ...problemResponses(400, 404, 409) } },
    handler: async (request, reply) =>
      reply.code(202).send(await service.runNow(principalOf(request), request.params.id)),
  });

  app.get('/api/schedules/:id/runs', {
    config: operate,
    schema: {
      params: IdParams,
      querystring: ScheduleRunsQuery,
      response: { 200: RunList, ...problemResponses(400, 404) },
    },
    handler: (request) =>
      service.runs(principalOf(request), request.params.id, {
        page: request.query.page ?? 1,
        perPage: request.query.per_page ?? LIMITS.perPageDefault,
      }),
  });
}
