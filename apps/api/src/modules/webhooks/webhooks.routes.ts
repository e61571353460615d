import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Redis } from 'ioredis';
import { Type } from 'typebox';
import { PUBLIC } from '@hostctl/auth-policy';
import { principalOf } from '../../plugins/access.js';
import { createFixedWindow } from '../../plugins/rate-limit.js';
import { IdParams, problemResponses } from '../../http/schemas.js';
import type { AuditRecorder } from '../audit/audit-recorder.js';
import type { WebhooksService } from './webhooks.service.js';
import {
  CreatedWebhook,
  DeliveriesQuery,
  DeliveryAccepted,
  DeliveryList,
  HookParams,
  WebhookInfo,
} from './webhooks.schemas.js';

/** Push payloads of big merges stay far below this; anything larger is not a push. */
const WEBHOOK_BODY_LIMIT = 1024 * 1024;
/** One forge address sends for all of its users' hooks: the per-address limit is this many hooks' worth. */
const ADDRESS_LIMIT_FACTOR = 10;

export interface ReceiverOptions {
  redis: Redis;
  prefix: string;
  perMinute: number;
  audit: AuditRecorder;
  log: FastifyBaseLogger;
}

/** Management of a service's push webhook (docs/webhooks.md), scoped like the service itself. */
export function registerWebhookRoutes(instance: FastifyInstance, service: WebhooksService): void {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();

  app.post('/api/services/:id/webhook', {
    config: { permission: 'services:operate', keyAction: 'manage' },
    schema: { params: IdParams, response: { 201: CreatedWebhook, ...problemResponses(404, 409) } },
    handler: async (request, reply) =>
      reply.status(201).send(await service.create(principalOf(request), request.params.id)),
  });

  app.get('/api/services/:id/webhook', {
    config: { permission: 'services:read' },
    schema: { params: IdParams, response: { 200: WebhookInfo, ...problemResponses(404) } },
    handler: (request) => service.get(principalOf(request), request.params.id),
  });

  app.delete('/api/services/:id/webhook', {
    config: { permission: 'services:operate', keyAction: 'manage' },
    schema: { params: IdParams, response: { 204: Type.Null(), ...problemResponses(404) } },
    handler: async (request, reply) => {
      await service.remove(principalOf(request), request.params.id);
      return reply.status(204).send(null);
    },
  });

  app.get('/api/services/:id/webhook-deliveries', {
    config: { permission: 'services:read' },
    schema: {
      params: IdParams,
      querystring: DeliveriesQuery,
      response: { 200: DeliveryList, ...problemResponses(400, 404) },
    },
    handler: (request) =>
      service.deliveries(principalOf(request), request.params.id, {
        page: request.query.page ?? 1,
        perPage: request.query.per_page ?? 20,
      }),
  });
}

/**
 * The public receiver `POST /hooks/push/:hook_id`: outside /api (no credential but the signature),
 * the raw body kept as bytes for the HMAC, rate limited per hook and per source address before any
 * database work (signed and unsigned posts on separate budgets: the signature is checked first,
 * which needs only the hook id), and audited with the hook as the actor.
 */
export async function registerWebhookReceiver(
  instance: FastifyInstance,
  service: WebhooksService,
  options: ReceiverOptions,
): Promise<void> {
  const limiter = createFixedWindow({ ...options, windowMs: 60_000, now: Date.now });
  await instance.register(async (scope) => {
    // Every media type arrives as bytes: the signature covers them exactly as sent.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: WEBHOOK_BODY_LIMIT }, (_r, body, done) =>
      done(null, body),
    );
    const app = scope.withTypeProvider<TypeBoxTypeProvider>();
    app.post('/hooks/push/:hook_id', {
      config: { permission: PUBLIC },
      bodyLimit: WEBHOOK_BODY_LIMIT,
      schema: {
        params: HookParams,
        response: { 202: DeliveryAccepted, ...problemResponses(400, 404, 413) },
      },
      handler: async (request, reply) => {
        const hookId = request.params.hook_id;
        const admit = async (isSigned: boolean): Promise<void> => {
          // Signed and unsigned posts count in buckets of their own: a flood of posts without the
          // secret is refused on its own budget and never spends the forge's.
          const kind = isSigned ? 'hook' : 'hook-unsigned';
          await limiter.enforce(`${kind}:${hookId}`, options.perMinute, limiter.hit);
          await limiter.enforce(
            `${kind}-ip:${request.ip}`,
            options.perMinute * ADDRESS_LIMIT_FACTOR,
            limiter.hit,
          );
        };
        const answer = await service.receive(
          {
            hookId,
            headers: request.headers,
            body: Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
            contentType: request.headers['content-type'],
            sourceAddress: request.ip,
          },
          admit,
        );
        options.audit.record(
          {
            actorType: 'webhook',
            actorUserId: null,
            actorApiKeyId: null,
            actorWebhookId: answer.target.hookId,
            actorCustomerId: answer.target.customerId,
            actorSeesAll: false,
            method: 'POST',
            route: '/hooks/push/:hook_id',
            action:
              answer.body.outcome === 'deployed' ? 'services.webhook_redeploy' : 'services.webhook_ignored',
            targetType: 'service',
            targetId: answer.target.serviceId,
            statusCode: 202,
            errorCode: null,
            sourceAddress: request.ip,
            requestId: request.id,
          },
          request.log,
        );
        return reply.status(202).send(answer.body);
      },
    });
  });
}
