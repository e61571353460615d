// Backup schedules against the real PostgreSQL (docs/backups.md#schedules): two scheduler instances
// on two connection pools stand for two worker replicas, and a test clock stands minutes or hours
// later without waiting. The backup and verify processors run for real against the database and
// the notification outbox; only the engine (restic in a container) is replaced by one that fails,
// as an unreachable target does.
import { randomUUID } from 'node:crypto';
import type { Job } from 'bullmq';
import {
  createBackupSchedulerStore,
  createWorkerBackupsStore,
  createWorkerDeploymentStore,
  createWorkerServiceStore,
  type AdvisoryLocks,
  type Db,
} from '@hostctl/db';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestDb, silentLogger } from '../testing/fixtures.js';
import { backupScheduleSource } from './backup-schedule-source.js';
import { createBackupProcessor, type BackupProcessorDeps } from './backup.processor.js';
import { createVerifyProcessor } from './verify.processor.js';
import { queuedBy, racingSchedulers } from '../testing/racing-schedulers.js';
import { operatorTargets } from './backup-targets.js';

const dbs = [createTestDb(), createTestDb()];
const db = dbs[0]!;
afterAll(async () => Promise.all(dbs.map((client) => client.$disconnect())));
// Each test's replicas see only its own schedules: the earlier tests' are switched off.
beforeEach(async () => {
  await db.backupSchedule.updateMany({ where: { nextRunAt: { gte: T0 } }, data: { enabled: false } });
});

// Years ahead: schedulers of other worker tests sharing this database tick on the real clock and
// must never find these schedules due.
const T0 = new Date('2032-03-01T10:00:00Z');
const MINUTE = 60_000;
const at = (ms: number) => new Date(T0.getTime() + ms);

/** Two replicas firing backup schedules; each its own pool and producer, one clock. */
function replicas(clock: { now: Date }, graceMs = MINUTE) {
  const enqueued: string[] = [];
  const schedulers = racingSchedulers({
    dbs,
    clock,
    missedGraceMs: graceMs,
    source: (client) =>
      backupScheduleSource({
        store: createBackupSchedulerStore(client),
        producer: { enqueue: async (_name, payload) => void enqueued.push(payload.backupId) },
      }),
  });
  /** One pass of both replicas at the same moment; how many backups they queued together. */
  return { enqueued, tick: async () => queuedBy(await schedulers.tick()) };
}

async function serviceWithSchedule(client: Db, schedule: { cron?: string } = {}) {
  const suffix = randomUUID().slice(0, 8);
  const customer = await client.customer.create({ data: { name: `bsched-${suffix}` } });
  await client.notificationSubscription.create({
    data: {
      customerId: customer.id,
      url: 'https://hooks.example.com/x',
      events: ['backup.failed', 'backup.missed', 'backup.verify_failed'],
      secret: 's',
    },
  });
  const service = await client.service.create({
    data: {
      name: `svc-${suffix}`,
      customerId: customer.id,
      status: 'running',
      deployMethod: 'compose',
      compose: 'services: {}',
      url: `http://svc-${suffix}.apps.localhost`,
    },
  });
  await client.backupSchedule.create({
    data: { serviceId: service.id, cron: schedule.cron ?? '* * * * *', timeZone: 'UTC', nextRunAt: T0 },
  });
  return { serviceId: service.id, customerId: customer.id };
}

const backupsOf = (serviceId: string) =>
  db.backup.findMany({ where: { serviceId }, orderBy: { scheduledFor: 'asc' } });
const deliveries = (customerId: string, event: string) =>
  db.notificationDelivery.findMany({ where: { event, subscription: { customerId } } });

describe('exactly one backup per scheduled time', () => {
  it('two replicas ticking at the same moment for five minutes record and enqueue each time once', async () => {
    const services = await Promise.all(Array.from({ length: 3 }, () => serviceWithSchedule(db)));
    const clock = { now: at(5_000) };
    const pair = replicas(clock);
    let queued = 0;
    for (let minute = 0; minute < 5; minute++) {
      clock.now = at(minute * MINUTE + 5_000);
      queued += await pair.tick();
    }
    // Both replicas read every due schedule each pass, yet only one insert per time created a row.
    expect(queued).toBe(15);
    for (const { serviceId, customerId } of services) {
      const rows = await backupsOf(serviceId);
      expect(rows.map((row) => row.scheduledFor?.toISOString())).toEqual(
        [0, 1, 2, 3, 4].map((m) => at(m * MINUTE).toISOString()),
      );
      expect(rows.every((row) => row.status === 'queued' && row.customerId === customerId)).toBe(true);
      expect(rows.every((row) => pair.enqueued.includes(row.id))).toBe(true);
    }
  });

  it('records nothing for a disabled schedule or a deleted service', async () => {
    const off = await serviceWithSchedule(db);
    await db.backupSchedule.update({ where: { serviceId: off.serviceId }, data: { enabled: false } });
    const gone = await serviceWithSchedule(db);
    await db.service.update({ where: { id: gone.serviceId }, data: { deletedAt: new Date() } });
    expect(await replicas({ now: at(2 * MINUTE + 5_000) }).tick()).toBe(0);
    expect(await backupsOf(off.serviceId)).toEqual([]);
    expect(await backupsOf(gone.serviceId)).toEqual([]);
  });
});

describe('missed times', () => {
  it('after ten minutes without workers: each time one record, ten missed, the latest backed up once', async () => {
    const { serviceId, customerId } = await serviceWithSchedule(db);
    // The grace is 20 s here: the latest time, 30 s ago, was missed too and is the one caught up.
    const pair = replicas({ now: at(10 * MINUTE + 30_000) }, 20_000);
    expect(await pair.tick()).toBe(1);
    expect(await pair.tick()).toBe(0);
    const rows = await backupsOf(serviceId);
    expect(rows).toHaveLength(11);
    expect(rows.slice(0, 10).every((row) => row.status === 'missed' && row.finishedAt !== null)).toBe(true);
    expect(rows[0]?.error).toMatch(/no worker reached this time within 20 s \(it was 630 s late\)/);
    expect(rows[10]).toMatchObject({ status: 'queued', scheduledFor: at(10 * MINUTE) });
    // Enqueued by the pass that recorded it, and again by the stranded sweep (the test clock is years
    // ahead of its created_at): the job id `backup.<id>` makes that one job. No missed row is enqueued.
    const ours = new Set(pair.enqueued.filter((id) => rows.some((row) => row.id === id)));
    expect([...ours]).toEqual([rows[10]!.id]);
    const missed = await deliveries(customerId, 'backup.missed');
    expect(missed).toHaveLength(1);
    expect(missed[0]?.body).toMatchObject({
      event: 'backup.missed',
      service: { id: serviceId },
      backup: {
        id: rows[9]!.id,
        status: 'missed',
        scheduled_for: at(9 * MINUTE).toISOString(),
        missed_times: 10,
      },
    });
    const schedule = await db.backupSchedule.findUniqueOrThrow({ where: { serviceId } });
    expect(schedule.nextRunAt).toEqual(at(11 * MINUTE));
  });
});

/** A lock that is always free: the processors' service lock is not what these tests are about. */
const freeLocks: AdvisoryLocks = {
  tryAcquire: async () => ({ isHeld: true, release: async () => undefined }),
  acquire: async () => ({ isHeld: true, release: async () => undefined }),
  close: async () => undefined,
};
const job = (data: object) => ({ data }) as Job<never>;
const UNREACHABLE = 'Fatal: unable to open repository: dial tcp 127.0.0.1:9: connect: connection refused';

describe('failures are loud', () => {
  it('a scheduled backup whose target is down is failed with the reason and notifies backup.failed once', async () => {
    const { serviceId, customerId } = await serviceWithSchedule(db);
    await db.deployment.create({
      data: {
        serviceId,
        trigger: 'create',
        status: 'succeeded',
        plan: {
          containers: [{ name: 'db', image: 'local/busybox:1', labels: {}, environment: {}, volumes: [] }],
          volumes: ['data'],
        },
      },
    });
    await replicas({ now: at(5_000) }).tick();
    const [backup] = await backupsOf(serviceId);
    const engine = {
      cleanUp: async () => undefined,
      ensureRepository: async () => {
        throw new Error(UNREACHABLE);
      },
    } as unknown as BackupProcessorDeps['engine'];
    const process = createBackupProcessor({
      store: createWorkerBackupsStore(db),
      services: createWorkerServiceStore(db),
      deployments: createWorkerDeploymentStore(db),
      driver: {
        refusal: () => undefined,
        lifecycle: async () => undefined,
        // These plans declare no backup hooks.
        execInComponent: () => Promise.reject(new Error('no hook is declared here')),
      },
      locks: freeLocks,
      engine,
      instance: 'test',
      targets: operatorTargets('local'),
      retention: {
        BACKUP_KEEP_LAST: 7,
        BACKUP_KEEP_DAILY: 14,
        BACKUP_KEEP_WEEKLY: 8,
        BACKUP_KEEP_MONTHLY: 12,
      },
      logger: silentLogger,
    });
    await process(job({ backupId: backup!.id }));
    await process(job({ backupId: backup!.id })); // a job delivered twice finds the run final
    const failed = await db.backup.findUniqueOrThrow({ where: { id: backup!.id } });
    expect(failed).toMatchObject({ status: 'failed', error: UNREACHABLE });
    const notified = await deliveries(customerId, 'backup.failed');
    expect(notified).toHaveLength(1);
    expect(notified[0]?.body).toEqual({
      id: notified[0]?.id,
      event: 'backup.failed',
      created_at: expect.any(String) as string,
      customer_id: customerId,
      service: { id: serviceId, name: expect.stringMatching(/^svc-/) as string },
      backup: { id: backup!.id, status: 'failed', scheduled_for: T0.toISOString(), error: UNREACHABLE },
      message: `backup ${backup!.id} failed: ${UNREACHABLE}`,
    });
  });

  it('a failed check of a backup notifies backup.verify_failed with the reason', async () => {
    const { serviceId, customerId } = await serviceWithSchedule(db);
    const backup = await db.backup.create({
      data: {
        serviceId,
        customerId,
        status: 'succeeded',
        method: 'live',
        verifyStatus: 'queued',
        volumes: [{ name: 'data', snapshot_id: 'abcdef12', bytes: 1, files: 1 }],
      },
    });
    const verify = createVerifyProcessor({
      store: createWorkerBackupsStore(db),
      engine: {
        cleanUp: async () => undefined,
        restic: async () => ({ exitCode: 1, stdout: '', stderr: 'error: pack 1234abcd not found\n' }),
        on: () => {
          throw new Error('the operator target is the engine itself');
        },
        // The repository check fails first: nothing is restored.
        ...Object.fromEntries(
          ['ensureVolume', 'removeVolume', 'restoreInto', 'runComponent'].map((name) => [
            name,
            () => Promise.reject(new Error(`${name} after a failed repository check`)),
          ]),
        ),
      } as never,
      locks: freeLocks,
      targets: operatorTargets('local'),
      deployments: createWorkerDeploymentStore(db),
      services: createWorkerServiceStore(db),
      instance: 'schedtest',
      logger: silentLogger,
    });
    await verify(job({ backupId: backup.id }));
    expect(await db.backup.findUniqueOrThrow({ where: { id: backup.id } })).toMatchObject({
      verifyStatus: 'failed',
      verifyError: expect.stringContaining('restic check failed') as string,
    });
    const notified = await deliveries(customerId, 'backup.verify_failed');
    expect(notified).toHaveLength(1);
    expect(notified[0]?.body).toMatchObject({
      event: 'backup.verify_failed',
      backup: { id: backup.id, status: 'succeeded', scheduled_for: null },
    });
    expect(JSON.stringify(notified[0]?.body)).toContain('pack 1234abcd not found');
  });
});
