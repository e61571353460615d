// Scheduled restore tests against the real PostgreSQL (docs/backups.md#verification): two scheduler
// instances on two connection pools stand for two worker replicas, a test clock stands hours later
// without waiting. Each time of a schedule's verify_cron queues one check of the service's latest
// succeeded backup, however many replicas tick.
import { randomUUID } from 'node:crypto';
import { createBackupVerifySchedulerStore } from '@hostctl/db';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestDb } from '../testing/fixtures.js';
import { queuedBy, racingSchedulers } from '../testing/racing-schedulers.js';
import { verifyScheduleSource } from './verify-schedule-source.js';

const dbs = [createTestDb(), createTestDb()];
const db = dbs[0]!;
afterAll(async () => Promise.all(dbs.map((client) => client.$disconnect())));

// Years ahead: no scheduler on the real clock ever finds these checks due. The backup cursor stays
// before the backup schedule test's T0 (2032), whose clean-up switches off schedules after it.
const T0 = new Date('2033-05-01T10:00:00Z');
const BACKUP_CURSOR = new Date('2031-01-01T00:00:00Z');
const HOUR = 3_600_000;
const at = (ms: number) => new Date(T0.getTime() + ms);

// Each test's replicas see only its own schedules: the earlier tests' checks are switched off.
beforeEach(async () => {
  await db.backupSchedule.updateMany({
    where: { verifyNextRunAt: { gte: T0 } },
    data: { verifyCron: null, verifyNextRunAt: null },
  });
});

/** Two replicas firing verify schedules; each its own pool, one clock, one list of enqueued jobs. */
function replicas(clock: { now: Date }, graceMs = 60_000) {
  const enqueued: string[] = [];
  const schedulers = racingSchedulers({
    dbs,
    clock,
    missedGraceMs: graceMs,
    source: (client) =>
      verifyScheduleSource({
        store: createBackupVerifySchedulerStore(client),
        producer: { enqueue: async (_name, payload) => void enqueued.push(payload.backupId) },
      }),
  });
  /** One pass of both replicas at the same moment; how many checks they queued together. */
  return { enqueued, tick: async () => queuedBy(await schedulers.tick()) };
}

/** A service with an hourly check and, oldest first, a succeeded, a succeeded and a failed backup. */
async function serviceWithChecks() {
  const suffix = randomUUID().slice(0, 8);
  const customer = await db.customer.create({ data: { name: `vsched-${suffix}` } });
  const service = await db.service.create({
    data: {
      name: `svc-${suffix}`,
      customerId: customer.id,
      status: 'running',
      deployMethod: 'compose',
      compose: 'services: {}',
      url: `http://svc-${suffix}.apps.localhost`,
    },
  });
  await db.backupSchedule.create({
    data: {
      serviceId: service.id,
      cron: '0 3 * * *',
      timeZone: 'UTC',
      nextRunAt: BACKUP_CURSOR,
      verifyCron: '0 * * * *',
      verifyNextRunAt: T0,
    },
  });
  const backups = [];
  for (const [index, status] of ['succeeded', 'succeeded', 'failed'].entries())
    backups.push(
      await db.backup.create({
        data: {
          serviceId: service.id,
          customerId: customer.id,
          status,
          method: 'live',
          createdAt: new Date(T0.getTime() - (3 - index) * HOUR),
        },
      }),
    );
  return { serviceId: service.id, latestSucceeded: backups[1]!.id, backupIds: backups.map((b) => b.id) };
}

const ours = (enqueued: string[], ids: string[]) => [...new Set(enqueued.filter((id) => ids.includes(id)))];
const checksOf = async (ids: string[]) =>
  (await db.backup.findMany({ where: { id: { in: ids } }, orderBy: { createdAt: 'asc' } })).map(
    (row) => row.verifyStatus,
  );

describe('exactly one check per scheduled time', () => {
  it("two replicas ticking at a check's time queue one check of the latest succeeded backup", async () => {
    const service = await serviceWithChecks();
    const clock = { now: at(5_000) };
    const pair = replicas(clock);

    expect(await pair.tick()).toBe(1);
    expect(await pair.tick()).toBe(0); // the same moment again: the cursor has moved on
    expect(ours(pair.enqueued, service.backupIds)).toEqual([service.latestSucceeded]);
    expect(await checksOf(service.backupIds)).toEqual([null, 'queued', null]);
    const schedule = await db.backupSchedule.findUniqueOrThrow({ where: { serviceId: service.serviceId } });
    expect(schedule.verifyNextRunAt).toEqual(at(HOUR));
    expect(schedule.nextRunAt).toEqual(BACKUP_CURSOR); // the backup times are not touched

    // The next hour comes while that check is still queued: nothing more is asked for.
    clock.now = at(HOUR + 5_000);
    expect(await pair.tick()).toBe(0);
    // Once it passed, the hour after queues it again, once.
    await db.backup.update({ where: { id: service.latestSucceeded }, data: { verifyStatus: 'passed' } });
    clock.now = at(2 * HOUR + 5_000);
    expect(await pair.tick()).toBe(1);
    expect(await checksOf(service.backupIds)).toEqual([null, 'queued', null]);
  });

  it('after an outage checks once for all the missed times, and a service without a backup queues nothing', async () => {
    const service = await serviceWithChecks();
    const empty = await serviceWithChecks();
    await db.backup.deleteMany({ where: { serviceId: empty.serviceId } });
    // Five hours without workers: the four earlier times are missed, the latest is caught up once.
    const pair = replicas({ now: at(5 * HOUR + 120_000) });
    expect(await pair.tick()).toBe(1);
    expect(await pair.tick()).toBe(0);
    expect(ours(pair.enqueued, service.backupIds)).toEqual([service.latestSucceeded]);
    for (const { serviceId } of [service, empty]) {
      const schedule = await db.backupSchedule.findUniqueOrThrow({ where: { serviceId } });
      expect(schedule.verifyNextRunAt).toEqual(at(6 * HOUR));
    }
  });

  it('a replica that read the cursor before another moved it adds nothing, even once that check ended', async () => {
    const service = await serviceWithChecks();
    const slow = createBackupVerifySchedulerStore(dbs[1]!);
    const stale = (await slow.dueSchedules(at(5_000), 200)).find((s) => s.serviceId === service.serviceId);
    expect(await replicas({ now: at(5_000) }).tick()).toBe(1);
    await db.backup.update({ where: { id: service.latestSucceeded }, data: { verifyStatus: 'passed' } });
    // The slow replica records the same time late: the check of that time already ran.
    const late = await slow.recordTimes(stale!, [{ scheduledFor: T0, kind: 'run' }], at(HOUR));
    expect(late.queued).toEqual([]);
    expect(await checksOf(service.backupIds)).toEqual([null, 'passed', null]);
  });

  it('takes no check of a disabled schedule', async () => {
    const service = await serviceWithChecks();
    await db.backupSchedule.update({ where: { serviceId: service.serviceId }, data: { enabled: false } });
    expect(await replicas({ now: at(5_000) }).tick()).toBe(0);
    expect(await checksOf(service.backupIds)).toEqual([null, null, null]);
  });
});
