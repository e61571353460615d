import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { LIFECYCLE_ACTIONS } from '@hostctl/domain';
import { principalOf } from '../../plugins/access.js';
import { registerSecretReveal } from './secret-reveal.route.js';
import { IdParams, PageQuery, problemResponses, Timestamp } from '../../http/schemas.js';
import type { ServicesService } from './services.service.js';
import {
  CreateServiceBody,
  CreateServiceResult,
  LifecycleResult,
  RedeployResult,
  RollbackBody,
  RollbackResult,
  ServiceDetail,
  ServiceList,
  ServiceListQuery,
  UpdateServiceBody,
  UpdateServiceResult,
} from './services.schemas.js';

const EventsQuery = Type.Object(PageQuery, { additionalProperties: false });
const EventList = Type.Object({
  data: Type.Array(
    Type.Object({ type: Type.String(), status: Type.String(), message: Type.String(), timestamp: Timestamp }),
  ),
  total: Type.Integer(),
  page: Type.Integer(),
  per_page: Type.Integer(),
});

export function registerServiceRoutes(instance: FastifyInstance, service: ServicesService): void {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();

  app.get('/api/services', {
    // A service-limited key lists its one service (services.service.ts list).
    config: { permission: 'services:read', appliesServiceLimit: true },
    schema: { querystring: ServiceListQuery, response: { 200: ServiceList, ...problemResponses(400) } },
    handler: (request) => service.list(principalOf(request), request.query),
  });

  app.get('/api/services/:id', {
    config: { permission: 'services:read' },
    schema: { params: IdParams, response: { 200: ServiceDetail, ...problemResponses(404) } },
    handler: (request) => service.get(principalOf(request), request.params.id),
  });

  app.post('/api/services', {
    config: { permission: 'services:create', idempotent: true },
    schema: {
      body: CreateServiceBody,
      response: { 201: CreateServiceResult, ...problemResponses(400, 409, 413, 415, 422) },
    },
    handler: async (request, reply) =>
      reply.status(201).send(await service.create(principalOf(request), request.body)),
  });

  for (const action of LIFECYCLE_ACTIONS) {
    app.post(`/api/services/:id/${action}`, {
      config: { permission: 'services:operate', keyAction: 'operate' },
      schema: { params: IdParams, response: { 200: LifecycleResult, ...problemResponses(404, 409, 500) } },
      handler: (request) => service.lifecycle(principalOf(request), request.params.id, action),
    });
  }

  app.post('/api/services/:id/redeploy', {
    config: { permission: 'services:operate', keyAction: 'deploy', idempotent: true },
    schema: { params: IdParams, response: { 200: RedeployResult, ...problemResponses(404) } },
    handler: (request) => service.redeploy(principalOf(request), request.params.id),
  });

  app.post('/api/services/:id/rollback', {
    config: { permission: 'services:operate', keyAction: 'deploy', idempotent: true },
    schema: {
      params: IdParams,
      body: RollbackBody,
      response: { 200: RollbackResult, ...problemResponses(400, 404, 409) },
    },
    handler: (request) =>
      service.rollback(principalOf(request), request.params.id, request.body?.deployment_id),
  });

  app.patch('/api/services/:id', {
    config: { permission: 'services:operate', keyAction: 'manage' },
    schema: {
      params: IdParams,
      body: UpdateServiceBody,
      response: { 200: UpdateServiceResult, ...problemResponses(400, 404, 409, 422) },
    },
    handler: (request) => service.update(principalOf(request), request.params.id, request.body),
  });

  registerSecretReveal(app, {
    url: '/api/services/:id/secret-variables/reveal',
    audit: 'services.secret_variables.reveal',
    reveal: (principal, id, name) => service.revealSecret(principal, id, name),
  });

  app.delete('/api/services/:id', {
    config: { permission: 'services:delete' },
    schema: { params: IdParams, response: { 204: Type.Null(), ...problemResponses(404) } },
    handler: async (request, reply) => {
      await service.remove(principalOf(request), request.params.id);
      return reply.status(204).send(null);
    },
  });

  app.get('/api/services/:id/events', {
    config: { permission: 'services:read' },
    schema: {
      params: IdParams,
      querystring: EventsQuery,
      response: { 200: EventList, ...problemResponses(400, 404) },
    },
    handler: (request) =>
      service.events(principalOf(request), request.params.id, {
        page: request.query.page ?? 1,
        perPage: request.query.per_page ?? 20,
      }),
  });
}
