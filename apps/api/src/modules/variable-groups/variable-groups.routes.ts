import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { principalOf } from '../../plugins/access.js';
import { IdParams, problemResponses } from '../../http/schemas.js';
import { registerSecretReveal } from '../services/secret-reveal.route.js';
import { etagOf } from './if-match.js';
import type { VariableGroupsService } from './variable-groups.service.js';
import type { GroupAttachments } from './group-attachments.js';
import {
  AffectedServices,
  AttachGroupBody,
  AttachmentResult,
  DetachGroupBody,
  CreateVariableGroupBody,
  GroupRedeployResult,
  UpdateVariableGroupBody,
  UpdateVariableGroupResult,
  VariableGroupDetail,
  VariableGroupList,
  VariableGroupListItem,
  VariableGroupListQuery,
} from './variable-groups.schemas.js';

/**
 * Variable groups (docs/secrets.md#variable-groups). Permissions are the services' ones, since a
 * group is part of what a customer's services run: reading needs `services:read`, changing needs
 * what changing a service needs; the deploy-token actions follow (read, manage; redeploy: deploy).
 * A service-limited key reaches none of these routes (a group is shared by services).
 */
export function registerVariableGroupRoutes(
  instance: FastifyInstance,
  service: VariableGroupsService,
  attachments: GroupAttachments,
): void {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();

  app.get('/api/variable-groups', {
    config: { permission: 'services:read' },
    schema: {
      querystring: VariableGroupListQuery,
      response: { 200: VariableGroupList, ...problemResponses(400) },
    },
    handler: (request) => service.list(principalOf(request), request.query),
  });

  app.post('/api/variable-groups', {
    config: { permission: 'services:create', idempotent: true },
    schema: {
      body: CreateVariableGroupBody,
      // The list item's fields, no values: the idempotency record stores this answer in Redis.
      response: { 201: VariableGroupListItem, ...problemResponses(400, 409, 413, 415, 422) },
    },
    handler: async (request, reply) => {
      const created = await service.create(principalOf(request), request.body);
      return reply.status(201).header('etag', etagOf(created.version)).send(created);
    },
  });

  app.get('/api/variable-groups/:id', {
    config: { permission: 'services:read' },
    schema: { params: IdParams, response: { 200: VariableGroupDetail, ...problemResponses(404) } },
    handler: async (request, reply) => {
      const group = await service.get(principalOf(request), request.params.id);
      return reply.header('etag', etagOf(group.version)).send(group);
    },
  });

  app.patch('/api/variable-groups/:id', {
    config: { permission: 'services:operate', keyAction: 'manage', conditional: true },
    schema: {
      params: IdParams,
      body: UpdateVariableGroupBody,
      response: { 200: UpdateVariableGroupResult, ...problemResponses(400, 404, 409, 412, 422) },
    },
    handler: async (request, reply) => {
      const ifMatch = request.headers['if-match'];
      const updated = await service.update(principalOf(request), request.params.id, request.body, ifMatch);
      return reply.header('etag', etagOf(updated.version)).send(updated);
    },
  });

  app.delete('/api/variable-groups/:id', {
    config: { permission: 'services:delete' },
    schema: { params: IdParams, response: { 204: Type.Null(), ...problemResponses(404, 409) } },
    handler: async (request, reply) => {
      await service.remove(principalOf(request), request.params.id);
      return reply.status(204).send(null);
    },
  });

  app.get('/api/variable-groups/:id/services', {
    config: { permission: 'services:read' },
    schema: { params: IdParams, response: { 200: AffectedServices, ...problemResponses(404) } },
    handler: (request) => service.services(principalOf(request), request.params.id),
  });

  app.post('/api/variable-groups/:id/redeploy', {
    config: { permission: 'services:operate', keyAction: 'deploy', idempotent: true },
    schema: { params: IdParams, response: { 200: GroupRedeployResult, ...problemResponses(404, 409, 422) } },
    handler: (request) => service.redeploy(principalOf(request), request.params.id),
  });

  // Attach and detach change what a service runs: what a service's PATCH of variable_groups needs.
  // If-Match is the group's ETag (group-attachments.ts); the answer carries it too.
  for (const [verb, body, act] of [
    ['attach', AttachGroupBody, attachments.attach],
    ['detach', DetachGroupBody, attachments.detach],
  ] as const)
    app.post(`/api/variable-groups/:id/${verb}`, {
      config: { permission: 'services:operate', keyAction: 'manage', conditional: true },
      schema: {
        params: IdParams,
        body,
        response: { 200: AttachmentResult, ...problemResponses(400, 404, 409, 412, 422) },
      },
      handler: async (request, reply) => {
        const ifMatch = request.headers['if-match'];
        const { version, ...result } = await act(
          principalOf(request),
          request.params.id,
          request.body,
          ifMatch,
        );
        return reply.header('etag', etagOf(version)).send(result);
      },
    });

  registerSecretReveal(app, {
    url: '/api/variable-groups/:id/secret-variables/reveal',
    audit: 'variable_groups.secret_variables.reveal',
    reveal: (principal, id, name) => service.revealSecret(principal, id, name),
  });
}
