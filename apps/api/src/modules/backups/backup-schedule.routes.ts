import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { IdParams, problemResponses } from '../../http/schemas.js';
import { principalOf } from '../../plugins/access.js';
import { BackupSchedule, BackupScheduleBody } from './backup-schedule.schemas.js';
import type { BackupScheduleService } from './backup-schedule.service.js';

/**
 * A service's backup schedule and retention (docs/backups.md#schedules), one per service, so a
 * singular resource under it. Read like its backups (`services:read`: viewers too); changed by
 * admins and operators in scope. A deploy token needs `manage` to change it: a shorter retention
 * expires backups, which is as much a change of the service's data as a restore.
 */
export function registerBackupScheduleRoutes(
  instance: FastifyInstance,
  service: BackupScheduleService,
): void {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  const url = '/api/services/:id/backup-schedule';
  const change = { permission: 'services:operate', keyAction: 'manage' } as const;

  app.get(url, {
    config: { permission: 'services:read' },
    schema: { params: IdParams, response: { 200: BackupSchedule, ...problemResponses(404) } },
    handler: (request) => service.get(principalOf(request), request.params.id),
  });

  app.put(url, {
    config: change,
    schema: {
      params: IdParams,
      body: BackupScheduleBody,
      response: { 200: BackupSchedule, ...problemResponses(400, 404) },
    },
    handler: (request) => service.put(principalOf(request), request.params.id, request.body),
  });

  app.delete(url, {
    config: change,
    schema: { params: IdParams, response: { 204: Type.Null(), ...problemResponses(404) } },
    handler: async (request, reply) => {
      await service.remove(principalOf(request), request.params.id);
      return reply.code(204).send(null);
    },
  });
}
