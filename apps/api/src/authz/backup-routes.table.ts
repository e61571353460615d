import type { Fixtures } from './authz-fixtures.js';
import { one, readA, writeA, type RouteEntry } from './route-expectations.js';

// Backups and restores of services of customer A (docs/backups.md, backups.test.ts): read like
// the service, taken and restored by admins and operators in scope; another scope finds nothing.
const backupOf = async (f: Fixtures, serviceId: string) =>
  (
    await f.h.container.db.backup.create({
      data: {
        serviceId,
        customerId: f.customerA,
        status: 'succeeded',
        method: 'stop',
        volumes: [{ name: 'data', snapshot_id: 'abcdef12', bytes: 1, files: 1 }],
      },
    })
  ).id;
const restoreOf = async (f: Fixtures) => {
  const backupId = await backupOf(f, f.serviceA);
  return (
    await f.h.container.db.backupRestore.create({
      data: { backupId, serviceId: f.serviceA, customerId: f.customerA, status: 'succeeded' },
    })
  ).id;
};

/** A service of A with a backup schedule (a fresh one for the routes that remove it). */
const scheduled = async (f: Fixtures, serviceId: string) => {
  // Callers of one route run at once: the first insert wins, the others find it there.
  await f.h.container.db.backupSchedule.createMany({
    data: [{ serviceId, cron: '0 3 * * *', timeZone: 'UTC', nextRunAt: new Date(Date.now() + 3_600_000) }],
    skipDuplicates: true,
  });
  return serviceId;
};

/** Customer A with a backup target of its own (callers run at once: the first insert wins). */
const targeted = async (f: Fixtures) => {
  await f.h.container.db.customerBackupTarget.createMany({
    data: [
      {
        customerId: f.customerA,
        endpoint: 'https://s3.example.com:443',
        bucket: 'authz-bucket',
        prefix: 'hostctl',
        region: 'us-east-1',
        credentials: { access_key_id: 'AKIDAUTHZ', secret_access_key: 'authz-secret-key' },
      },
    ],
    skipDuplicates: true,
  });
  return `/api/customers/${f.customerA}/backup-target`;
};

export const BACKUP_ROUTES: Record<string, RouteEntry> = {
  'POST /api/services/:id/backups': one('back up', writeA(202), async (f) => ({
    url: `/api/services/${await f.freshService()}/backups`,
  })),
  'GET /api/services/:id/backups': one('snapshots', readA(200), (f) => ({
    url: `/api/services/${f.serviceA}/backups`,
  })),
  'GET /api/backups/:id': one('backup', readA(200), async (f) => ({
    url: `/api/backups/${await backupOf(f, f.serviceA)}`,
  })),
  'POST /api/backups/:id/restore': one('restore', writeA(202), async (f) => ({
    url: `/api/backups/${await backupOf(f, await f.freshService())}/restore`,
  })),
  // A restore into a new service is a create: viewers 403, another scope finds no backup (404).
  'POST /api/backups/:id/clone': one('clone into a new service', writeA(202), async (f) => ({
    url: `/api/backups/${await backupOf(f, f.serviceA)}/clone`,
    payload: { name: `clone-${Math.random().toString(36).slice(2, 10)}` },
  })),
  'POST /api/backups/:id/verify': one('verify', writeA(202), async (f) => ({
    url: `/api/backups/${await backupOf(f, f.serviceA)}/verify`,
  })),
  'GET /api/services/:id/backup-schedule': one('backup schedule', readA(200), async (f) => ({
    url: `/api/services/${await scheduled(f, f.serviceA)}/backup-schedule`,
  })),
  'PUT /api/services/:id/backup-schedule': one('set a backup schedule', writeA(200), async (f) => ({
    url: `/api/services/${await f.freshService()}/backup-schedule`,
    payload: { cron: '0 3 * * *', retention: { keep_last: 2 } },
  })),
  'DELETE /api/services/:id/backup-schedule': one('remove a backup schedule', writeA(204), async (f) => ({
    url: `/api/services/${await scheduled(f, await f.freshService())}/backup-schedule`,
  })),
  // A customer's own bucket (docs/backups.md#a-customers-own-target): customers:manage even to
  // read it (viewers 403), another customer's 404. DELETE is idempotent: 204 with or without one.
  'GET /api/customers/:id/backup-target': one('own backup target', writeA(200), async (f) => ({
    url: await targeted(f),
  })),
  'PUT /api/customers/:id/backup-target': one('set own backup target', writeA(200), (f) => ({
    url: `/api/customers/${f.customerA}/backup-target`,
    payload: {
      endpoint: 'https://s3.example.com',
      bucket: 'authz-bucket',
      access_key_id: 'AKIDAUTHZ',
      secret_access_key: 'authz-secret-key',
    },
  })),
  // PATCH changes the fields given (the stored keys stay for the same endpoint and bucket).
  'PATCH /api/customers/:id/backup-target': one('change own backup target', writeA(200), async (f) => ({
    url: await targeted(f),
    payload: { prefix: 'authz-patched' },
  })),
  'DELETE /api/customers/:id/backup-target': one('remove own backup target', writeA(204), async (f) => ({
    url: await targeted(f),
  })),
  'GET /api/restores/:id': one('restore run', readA(200), async (f) => ({
    url: `/api/restores/${await restoreOf(f)}`,
  })),
};
