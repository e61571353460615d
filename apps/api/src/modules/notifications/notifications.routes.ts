import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { IdParams, problemResponses } from '../../http/schemas.js';
import { principalOf } from '../../plugins/access.js';
import {
  CreateSubscriptionBody,
  Delivery,
  DeliveryList,
  Subscription,
  SubscriptionList,
  SubscriptionListQuery,
  SubscriptionWithSecret,
  UpdateSubscriptionBody,
} from './notifications.schemas.js';
import type { NotificationsService } from './notifications.service.js';

const BASE = '/api/notification-subscriptions';

/** Outbound notification subscriptions and their delivery log (docs/notifications.md). */
export function registerNotificationRoutes(instance: FastifyInstance, service: NotificationsService): void {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();

  app.post(BASE, {
    config: { permission: 'notifications:manage' },
    schema: {
      body: CreateSubscriptionBody,
      response: { 201: SubscriptionWithSecret, ...problemResponses(400, 409, 413, 415) },
    },
    handler: async (request, reply) =>
      reply.status(201).send(await service.create(principalOf(request), request.body)),
  });

  app.get(BASE, {
    config: { permission: 'notifications:read' },
    schema: {
      querystring: SubscriptionListQuery,
      response: { 200: SubscriptionList, ...problemResponses(400) },
    },
    handler: (request) => service.list(principalOf(request), request.query),
  });

  app.get(`${BASE}/:id`, {
    config: { permission: 'notifications:read' },
    schema: { params: IdParams, response: { 200: Subscription, ...problemResponses(404) } },
    handler: (request) => service.get(principalOf(request), request.params.id),
  });

  app.patch(`${BASE}/:id`, {
    config: { permission: 'notifications:manage' },
    schema: {
      params: IdParams,
      body: UpdateSubscriptionBody,
      response: { 200: Subscription, ...problemResponses(400, 404, 413, 415) },
    },
    handler: (request) => service.update(principalOf(request), request.params.id, request.body),
  });

  app.delete(`${BASE}/:id`, {
    config: { permission: 'notifications:manage' },
    schema: { params: IdParams, response: { 204: Type.Null(), ...problemResponses(404) } },
    handler: async (request, reply) => {
      await service.remove(principalOf(request), request.params.id);
      return reply.status(204).send(null);
    },
  });

  app.post(`${BASE}/:id/rotate-secret`, {
    config: { permission: 'notifications:manage' },
    schema: { params: IdParams, response: { 200: SubscriptionWithSecret, ...problemResponses(404) } },
    handler: (request) => service.rotateSecret(principalOf(request), request.params.id),
  });

  app.get(`${BASE}/:id/deliveries`, {
    config: { permission: 'notifications:read' },
    schema: {
      params: IdParams,
      querystring: SubscriptionListQuery,
      response: { 200: DeliveryList, ...problemResponses(400, 404) },
    },
    handler: (request) => service.deliveries(principalOf(request), request.params.id, request.query),
  });

  app.post('/api/notification-deliveries/:id/redeliver', {
    config: { permission: 'notifications:manage' },
    schema: { params: IdParams, response: { 202: Delivery, ...problemResponses(404, 409) } },
    handler: async (request, reply) =>
      reply.status(202).send(await service.redeliver(principalOf(request), request.params.id)),
  });
}
