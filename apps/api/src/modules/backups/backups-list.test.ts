import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, json, type Harness } from '../../test-support/harness.js';

// GET /api/services/:id/backups and GET /api/backups/:id without a worker (docs/backups.md): each
// backup carries its newest restore (`last_restore`), so the dashboard can follow a restore that
// is still going after a reload, and show one that failed with its reason.
let h: Harness;
let customerId: string;
let operator: { auth: string };

beforeAll(async () => {
  h = await createHarness();
  customerId = (await h.customer()).id;
  operator = await h.user('operator', customerId);
});
afterAll(async () => h.close());

interface Listed {
  id: string;
  status: string;
  last_restore: {
    id: string;
    service_id: string;
    status: string;
    error: string | null;
    finished_at: string | null;
  } | null;
}

async function backupOf(serviceId: string, customer = customerId) {
  return h.container.db.backup.create({
    data: {
      serviceId,
      customerId: customer,
      status: 'succeeded',
      method: 'live',
      volumes: [{ name: 'data', snapshot_id: 'abcdef12', bytes: 10, files: 1 }],
    },
  });
}

const get = (url: string, auth = operator.auth) =>
  h.app.inject({ method: 'GET', url, headers: { authorization: auth } });

describe('a backup lists its newest restore', () => {
  it('null before any restore; then the newest one, with its status and reason', async () => {
    const service = await h.createService(operator.auth, { customer_id: customerId });
    const never = await backupOf(service.id);
    const restored = await backupOf(service.id);
    const db = h.container.db;
    await db.backupRestore.create({
      data: {
        backupId: restored.id,
        serviceId: service.id,
        customerId,
        status: 'failed',
        error: 'restic restore of snapshot abcdef12 failed',
        createdAt: new Date(Date.now() - 60_000),
        finishedAt: new Date(Date.now() - 50_000),
      },
    });
    const newest = await db.backupRestore.create({
      data: { backupId: restored.id, serviceId: service.id, customerId, status: 'running' },
    });

    const listed = json<{ data: Listed[] }>(await get(`/api/services/${service.id}/backups`)).data;
    const byId = new Map(listed.map((row) => [row.id, row]));
    expect(byId.get(never.id)?.last_restore).toBeNull();
    expect(byId.get(restored.id)?.last_restore).toMatchObject({
      id: newest.id,
      service_id: service.id,
      status: 'running',
      error: null,
      finished_at: null,
    });

    const one = json<Listed>(await get(`/api/backups/${restored.id}`));
    expect(one.last_restore?.id).toBe(newest.id);

    // The restore that failed is what shows once the newest is gone (a later one supersedes it).
    await db.backupRestore.delete({ where: { id: newest.id } });
    const after = json<Listed>(await get(`/api/backups/${restored.id}`));
    expect(after.last_restore).toMatchObject({
      status: 'failed',
      error: 'restic restore of snapshot abcdef12 failed',
    });
  });

  it("another customer's user finds neither the list nor the backup", async () => {
    const service = await h.createService(operator.auth, { customer_id: customerId });
    const backup = await backupOf(service.id);
    const stranger = await h.user('admin', (await h.customer()).id);
    const list = await get(`/api/services/${service.id}/backups`, stranger.auth);
    expect(list.statusCode).toBe(404);
    const one = await get(`/api/backups/${backup.id}`, stranger.auth);
    expect(one.statusCode).toBe(404);
    expect(json<{ detail: string }>(one).detail).toBe(`backup ${backup.id} not found`);
  });
});
