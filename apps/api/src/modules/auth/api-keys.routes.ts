import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { IdParams, problemResponses } from '../../http/schemas.js';
import { principalOf } from '../../plugins/access.js';
import type { ApiKeysService } from './api-keys.service.js';
import { ApiKeyCreated, ApiKeyList, CreateApiKeyBody } from './auth.schemas.js';

/** Create (session, or a key with manage: key-minting.ts), list and revoke the caller's API keys. */
export function registerApiKeyRoutes(instance: FastifyInstance, service: ApiKeysService): void {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();

  // A limited key with `manage` may mint narrower keys for its own scope (key-minting.ts): the
  // handler narrows to the key's service itself, hence appliesServiceLimit.
  app.post('/api/auth/api-keys', {
    config: { permission: 'api_keys:manage', keyAction: 'manage', appliesServiceLimit: true },
    schema: {
      body: CreateApiKeyBody,
      response: { 201: ApiKeyCreated, ...problemResponses(400, 409, 413, 415) },
    },
    handler: async (request, reply) =>
      reply.status(201).send(await service.create(principalOf(request), request.body)),
  });

  app.get('/api/auth/api-keys', {
    config: { permission: 'api_keys:manage' },
    schema: { response: { 200: ApiKeyList, ...problemResponses() } },
    handler: (request) => service.list(principalOf(request)),
  });

  app.delete('/api/auth/api-keys/:id', {
    config: { permission: 'api_keys:manage' },
    schema: { params: IdParams, response: { 204: Type.Null(), ...problemResponses(404) } },
    handler: async (request, reply) => {
      await service.revoke(principalOf(request), request.params.id);
      return reply.status(204).send(null);
    },
  });
}
