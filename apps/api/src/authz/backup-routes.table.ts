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
  'POST /api/backups/:id/verify': one('verify', writeA(202), async (f) => ({
    url: `/api/backups/${await backupOf(f, f.serviceA)}/verify`,
  })),
  'GET /api/restores/:id': one('restore run', readA(200), async (f) => ({
    url: `/api/restores/${await restoreOf(f)}`,
  })),
};
