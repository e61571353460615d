import { createBackupMetricsStore } from '@hostctl/db';
import { Registry } from 'prom-client';
import { afterAll, describe, expect, it } from 'vitest';
import {
  createComposeService,
  createTestDb,
  deleteServiceRows,
  type CreatedService,
} from '../testing/fixtures.js';
import { registerBackupMetrics } from './backup-metrics.js';

// An operator alerts from any worker's /metrics on "no good backup for 25 hours" and on failing
// backups (docs/backups.md#metrics): each service's newest succeeded backup (when, how long, how
// big) survives a later failure, failures of the last day are counted, and each service is its
// own series under its own customer.
const db = createTestDb();
const created: CreatedService[] = [];
afterAll(async () => {
  await deleteServiceRows(db, created);
  await db.$disconnect();
});

const compose = 'services:\n  app:\n    image: local/busybox:1\n';
const hoursAgo = (hours: number) => new Date(Date.now() - hours * 3_600_000);

async function backup(
  service: CreatedService,
  input: { status: string; createdHoursAgo: number; durationMs?: number; sizeBytes?: number },
) {
  const createdAt = hoursAgo(input.createdHoursAgo);
  const finishedAt = new Date(createdAt.getTime() + (input.durationMs ?? 1000));
  await db.backup.create({
    data: {
      serviceId: service.serviceId,
      customerId: service.customerId,
      status: input.status,
      method: 'live',
      createdAt,
      startedAt: createdAt,
      finishedAt: input.status === 'missed' ? null : finishedAt,
      durationMs: input.durationMs ?? null,
      sizeBytes: input.sizeBytes === undefined ? null : BigInt(input.sizeBytes),
      error: input.status === 'succeeded' ? null : 'target unreachable',
    },
  });
  return finishedAt;
}

/** Every series of `metric` for the service: its labels and value. */
function seriesOf(text: string, metric: string, serviceId: string) {
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${metric}{`) && line.includes(`service_id="${serviceId}"`))
    .map((line) => ({
      customerId: /customer_id="([^"]*)"/.exec(line)?.[1],
      value: Number(line.split(' ').at(-1)),
    }));
}

describe("services' backups in the worker's metrics", () => {
  it('reports the newest succeeded backup past a later failure, per service and customer', async () => {
    const failingAfterSuccess = await createComposeService(db, { compose });
    const neverBackedUp = await createComposeService(db, { compose });
    const otherCustomer = await createComposeService(db, { compose });
    const neverSucceeded = await createComposeService(db, { compose });
    const deleted = await createComposeService(db, { compose });
    created.push(failingAfterSuccess, neverBackedUp, otherCustomer, neverSucceeded, deleted);

    await backup(failingAfterSuccess, { status: 'succeeded', createdHoursAgo: 50, durationMs: 900 });
    const lastGood = await backup(failingAfterSuccess, {
      status: 'succeeded',
      createdHoursAgo: 26,
      durationMs: 4200,
      sizeBytes: 123_456_789,
    });
    await backup(failingAfterSuccess, { status: 'failed', createdHoursAgo: 30 });
    await backup(failingAfterSuccess, { status: 'failed', createdHoursAgo: 2 });
    await backup(failingAfterSuccess, { status: 'missed', createdHoursAgo: 1 });
    const otherGood = await backup(otherCustomer, {
      status: 'succeeded',
      createdHoursAgo: 3,
      durationMs: 1500,
      sizeBytes: 2048,
    });
    await backup(neverSucceeded, { status: 'failed', createdHoursAgo: 5 });
    await backup(deleted, { status: 'succeeded', createdHoursAgo: 4, durationMs: 10, sizeBytes: 1 });
    await db.service.update({ where: { id: deleted.serviceId }, data: { deletedAt: new Date() } });

    const registry = new Registry();
    registerBackupMetrics(registry, createBackupMetricsStore(db));
    const text = await registry.metrics();
    const of = (metric: string, service: CreatedService) =>
      seriesOf(text, `hostctl_backup_${metric}`, service.serviceId);

    // The later failures do not hide the good backup; the one of 30 hours ago is out of the day.
    const own = failingAfterSuccess.customerId;
    expect(of('last_success_timestamp_seconds', failingAfterSuccess)).toEqual([
      { customerId: own, value: lastGood.getTime() / 1000 },
    ]);
    expect(of('last_success_duration_seconds', failingAfterSuccess)).toEqual([
      { customerId: own, value: 4.2 },
    ]);
    expect(of('last_success_size_bytes', failingAfterSuccess)).toEqual([
      { customerId: own, value: 123_456_789 },
    ]);
    expect(of('failures_last_24h', failingAfterSuccess)).toEqual([{ customerId: own, value: 2 }]);

    // Another customer's service is a series of its own, under its own customer.
    const other = otherCustomer.customerId;
    expect(other).not.toBe(own);
    expect(of('last_success_timestamp_seconds', otherCustomer)).toEqual([
      { customerId: other, value: otherGood.getTime() / 1000 },
    ]);
    expect(of('last_success_size_bytes', otherCustomer)).toEqual([{ customerId: other, value: 2048 }]);
    expect(of('failures_last_24h', otherCustomer)).toEqual([{ customerId: other, value: 0 }]);

    // Backups but never a good one: 0, so "no good backup for 25 hours" fires for it too.
    expect(of('last_success_timestamp_seconds', neverSucceeded)).toEqual([
      { customerId: neverSucceeded.customerId, value: 0 },
    ]);
    expect(of('last_success_size_bytes', neverSucceeded)).toEqual([]);
    expect(of('failures_last_24h', neverSucceeded)).toEqual([
      { customerId: neverSucceeded.customerId, value: 1 },
    ]);

    // No backups, or deleted: no series at all.
    expect(text).not.toContain(neverBackedUp.serviceId);
    expect(text).not.toContain(deleted.serviceId);
  });
});
