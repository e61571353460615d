import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { IdParams, problemResponses } from '../../http/schemas.js';
import { principalOf } from '../../plugins/access.js';
import { Backup, BackupList, BackupListQuery, CloneBody, Restore } from './backups.schemas.js';
import type { BackupsService } from './backups.service.js';

/**
 * Backups of a service's volumes and restores of them (docs/backups.md). Both answer 202 with the
 * run as recorded: a worker does the work, and the run's own route tells how it ended.
 * `/api/backups/:id` and `/api/restores/:id` name no service in their path, so deploy tokens
 * (limited keys) are refused them (plugins/route-target.ts); the service's own routes take them.
 */
export function registerBackupRoutes(instance: FastifyInstance, service: BackupsService): void {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();

  app.post('/api/services/:id/backups', {
    config: { permission: 'services:operate', keyAction: 'operate' },
    schema: { params: IdParams, response: { 202: Backup, ...problemResponses(404) } },
    handler: async (request, reply) =>
      reply.status(202).send(await service.create(principalOf(request), request.params.id)),
  });

  app.get('/api/services/:id/backups', {
    config: { permission: 'services:read' },
    schema: {
      params: IdParams,
      querystring: BackupListQuery,
      response: { 200: BackupList, ...problemResponses(400, 404) },
    },
    handler: (request) => service.list(principalOf(request), request.params.id, request.query),
  });

  app.get('/api/backups/:id', {
    config: { permission: 'services:read' },
    schema: { params: IdParams, response: { 200: Backup, ...problemResponses(404) } },
    handler: (request) => service.get(principalOf(request), request.params.id),
  });

  // Replacing a service's data is a change of the service, not a start or stop: `manage`.
  app.post('/api/backups/:id/restore', {
    config: { permission: 'services:operate', keyAction: 'manage' },
    schema: { params: IdParams, response: { 202: Restore, ...problemResponses(404, 409) } },
    handler: async (request, reply) =>
      reply.status(202).send(await service.restore(principalOf(request), request.params.id)),
  });

  // A restore into a new service creates a service: the create permission, the create's
  // Idempotency-Key rules. Deploy tokens are refused it (no service in the path, and a token may
  // not create services). 202: the service exists at once, its data and first deployment follow.
  app.post('/api/backups/:id/clone', {
    config: { permission: 'services:create', idempotent: true },
    schema: {
      params: IdParams,
      body: CloneBody,
      response: { 202: Restore, ...problemResponses(400, 404, 409, 422) },
    },
    handler: async (request, reply) =>
      reply.status(202).send(await service.clone(principalOf(request), request.params.id, request.body.name)),
  });

  // A check reads the repository and changes nothing: `operate`, like taking a backup.
  app.post('/api/backups/:id/verify', {
    config: { permission: 'services:operate', keyAction: 'operate' },
    schema: { params: IdParams, response: { 202: Backup, ...problemResponses(404, 409) } },
    handler: async (request, reply) =>
      reply.status(202).send(await service.verify(principalOf(request), request.params.id)),
  });

  app.get('/api/restores/:id', {
    config: { permission: 'services:read' },
    schema: { params: IdParams, response: { 200: Restore, ...problemResponses(404) } },
    handler: (request) => service.getRestore(principalOf(request), request.params.id),
  });
}
