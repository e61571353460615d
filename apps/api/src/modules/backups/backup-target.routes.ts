import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { IdParams, problemResponses } from '../../http/schemas.js';
import { principalOf } from '../../plugins/access.js';
import { BackupTarget, BackupTargetBody, BackupTargetPatch } from './backup-target.schemas.js';
import type { BackupTargetService } from './backup-target.service.js';

/**
 * A customer's own backup bucket (docs/backups.md#a-customers-own-target), one per customer, so a
 * singular resource under it. Even reading it needs `customers:manage` (viewers never: the
 * endpoint and bucket say where the customer's data is). Deploy tokens are refused: the path names
 * no service.
 */
export function registerBackupTargetRoutes(instance: FastifyInstance, service: BackupTargetService): void {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  const url = '/api/customers/:id/backup-target';
  const config = { permission: 'customers:manage' } as const;

  app.get(url, {
    config,
    schema: { params: IdParams, response: { 200: BackupTarget, ...problemResponses(400, 404) } },
    handler: (request) => service.get(principalOf(request), request.params.id),
  });

  app.put(url, {
    config,
    schema: {
      params: IdParams,
      body: BackupTargetBody,
      response: { 200: BackupTarget, ...problemResponses(400, 404, 413, 415) },
    },
    handler: (request) => service.put(principalOf(request), request.params.id, request.body),
  });

  // Changes the fields given only; 404 (not a create) when the customer has no target yet.
  app.patch(url, {
    config,
    schema: {
      params: IdParams,
      body: BackupTargetPatch,
      response: { 200: BackupTarget, ...problemResponses(400, 404, 413, 415) },
    },
    handler: (request) => service.patch(principalOf(request), request.params.id, request.body),
  });

  app.delete(url, {
    config,
    schema: { params: IdParams, response: { 204: Type.Null(), ...problemResponses(400, 404) } },
    handler: async (request, reply) => {
      await service.remove(principalOf(request), request.params.id);
      return reply.code(204).send(null);
    },
  });
}
