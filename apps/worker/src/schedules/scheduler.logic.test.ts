// The scheduler against the real PostgreSQL (docs/jobs.md#guarantees): two scheduler instances on
// two connection pools stand for two worker replicas; a test clock stands hours later without
// waiting. No engine: the runs are recorded and enqueued, and the tests play the run processor's
// part by writing the outcome a worker would.
import { randomUUID } from 'node:crypto';
import type { Db } from '@hostctl/db';
import { createSchedulerStore } from '@hostctl/db';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestDb } from '../testing/fixtures.js';
import { racingSchedulers } from '../testing/racing-schedulers.js';
import { jobScheduleSource } from './job-source.js';

const dbs = [createTestDb(), createTestDb()];
const db = dbs[0]!;
afterAll(async () => Promise.all(dbs.map((client) => client.$disconnect())));
// Each test's replicas see only its own schedules: the earlier tests' are switched off.
beforeEach(async () => {
  await db.serviceSchedule.updateMany({ where: { nextRunAt: { gte: T0 } }, data: { enabled: false } });
});

// Years ahead: the schedulers of other worker tests sharing this database tick on the real clock,
// and must never find these schedules due.
const T0 = new Date('2031-06-01T10:00:00Z');
const MINUTE = 60_000;
const at = (ms: number) => new Date(T0.getTime() + ms);

/** Two replicas: each its own pool and view of the clock, reading due schedules at once. */
function replicas(clock: { now: Date }, graceMs = MINUTE) {
  // Distinct run ids: a run may be enqueued again (the stranded sweep, on the test clock years
  // ahead of the rows' created_at); the job id `run.<id>` makes that a no-op in BullMQ.
  const enqueued = new Set<string>();
  const schedulers = racingSchedulers({
    dbs,
    clock,
    missedGraceMs: graceMs,
    source: (client) =>
      jobScheduleSource({
        store: createSchedulerStore(client),
        producer: { enqueue: async (_name, payload) => void enqueued.add(payload.runId) },
      }),
  });
  return { enqueued, tick: schedulers.tick };
}

async function serviceWithSchedule(
  client: Db,
  schedule: { cron?: string; overlapPolicy?: string; catchUp?: string; retries?: number } = {},
) {
  const suffix = randomUUID().slice(0, 8);
  const customer = await client.customer.create({ data: { name: `sched-${suffix}` } });
  await client.notificationSubscription.create({
    data: {
      customerId: customer.id,
      url: 'https://hooks.example.com/x',
      events: ['job.failed', 'job.missed'],
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
  const created = await client.serviceSchedule.create({
    data: {
      serviceId: service.id,
      name: 'job',
      cron: schedule.cron ?? '* * * * *',
      timeZone: 'UTC',
      command: ['./job'],
      timeoutSeconds: 60,
      overlapPolicy: schedule.overlapPolicy ?? 'allow',
      catchUp: schedule.catchUp ?? 'one',
      retries: schedule.retries ?? 0,
      nextRunAt: T0,
    },
  });
  return { scheduleId: created.id, customerId: customer.id };
}

const rowsOf = (scheduleId: string) =>
  db.serviceRun.findMany({ where: { scheduleId }, orderBy: [{ scheduledFor: 'asc' }, { attempt: 'asc' }] });
const deliveries = (customerId: string, event: string) =>
  db.notificationDelivery.findMany({ where: { event, subscription: { customerId } } });

describe('exactly one run per scheduled time', () => {
  it('two replicas ticking at the same moment for five minutes record and enqueue each time once', async () => {
    const schedules = await Promise.all(Array.from({ length: 5 }, () => serviceWithSchedule(db)));
    const clock = { now: at(5_000) };
    const pair = replicas(clock);
    for (let minute = 0; minute < 5; minute++) {
      clock.now = at(minute * MINUTE + 5_000);
      await pair.tick();
    }
    for (const { scheduleId } of schedules) {
      const rows = await rowsOf(scheduleId);
      expect(rows.map((row) => row.scheduledFor?.toISOString())).toEqual(
        [0, 1, 2, 3, 4].map((m) => at(m * MINUTE).toISOString()),
      );
      expect(rows.every((row) => row.status === 'queued')).toBe(true);
    }
    const runIds = (
      await db.serviceRun.findMany({ where: { scheduleId: { in: schedules.map((s) => s.scheduleId) } } })
    ).map((row) => row.id);
    expect(runIds).toHaveLength(25);
    expect(runIds.every((id) => pair.enqueued.has(id))).toBe(true);
  });
});

describe('missed times and catch-up', () => {
  it('after ten minutes without workers: each time one record, the latest run once (catch_up one)', async () => {
    const { scheduleId, customerId } = await serviceWithSchedule(db, { catchUp: 'one' });
    // The grace is 20 s here: the latest time, 30 s ago, was missed too and is the one caught up.
    const clock = { now: at(10 * MINUTE + 30_000) };
    const pair = replicas(clock, 20_000);
    await pair.tick();
    await pair.tick();
    const rows = await rowsOf(scheduleId);
    expect(rows).toHaveLength(11);
    expect(rows.slice(0, 10).every((row) => row.status === 'missed')).toBe(true);
    expect(rows[0]?.error).toMatch(/no worker reached this time within 20 s/);
    expect(rows[10]).toMatchObject({ status: 'queued', scheduledFor: at(10 * MINUTE) });
    expect(rows.filter((row) => pair.enqueued.has(row.id)).map((row) => row.id)).toEqual([rows[10]!.id]);
    const missed = await deliveries(customerId, 'job.missed');
    expect(missed).toHaveLength(1);
    expect(missed[0]?.body).toMatchObject({ job: { missed_times: 10, status: 'missed' } });
    const schedule = await db.serviceSchedule.findUniqueOrThrow({ where: { id: scheduleId } });
    expect(schedule.nextRunAt).toEqual(at(11 * MINUTE));
  });

  it('records every missed time and runs none with catch_up none', async () => {
    const { scheduleId } = await serviceWithSchedule(db, { catchUp: 'none' });
    const pair = replicas({ now: at(3 * MINUTE + 30_000) }, 20_000);
    await pair.tick();
    const rows = await rowsOf(scheduleId);
    expect(rows.map((row) => row.status)).toEqual(['missed', 'missed', 'missed', 'missed']);
    expect(rows.filter((row) => pair.enqueued.has(row.id))).toEqual([]);
  });

  it('runs a time reached within the grace, however late', async () => {
    const { scheduleId } = await serviceWithSchedule(db, { catchUp: 'none' });
    await replicas({ now: at(50_000) }).tick();
    expect((await rowsOf(scheduleId)).map((row) => row.status)).toEqual(['queued']);
  });
});

describe('overlap policies', () => {
  async function twoMinutes(overlapPolicy: string) {
    const { scheduleId } = await serviceWithSchedule(db, { overlapPolicy });
    const clock = { now: at(1_000) };
    const pair = replicas(clock);
    await pair.tick();
    const [first] = await rowsOf(scheduleId);
    await db.serviceRun.update({
      where: { id: first!.id },
      data: { status: 'running', startedAt: at(2_000) },
    });
    clock.now = at(MINUTE + 1_000);
    await pair.tick();
    const rows = await rowsOf(scheduleId);
    return {
      rows,
      first: first!,
      enqueued: rows.filter((row) => pair.enqueued.has(row.id)).map((row) => row.id),
    };
  }

  it('forbid: a run still going makes the next time skipped, naming it', async () => {
    const { rows, first, enqueued } = await twoMinutes('forbid');
    expect(rows.map((row) => row.status)).toEqual(['running', 'skipped']);
    expect(rows[1]?.error).toContain(`an earlier run (${first.id}) was still running`);
    expect(enqueued).toEqual([first.id]);
  });

  it('replace: the next time runs and the earlier run is cancelled', async () => {
    const { rows, enqueued } = await twoMinutes('replace');
    expect(rows.map((row) => row.status)).toEqual(['cancelled', 'queued']);
    expect(rows[0]?.error).toMatch(/replaced by the run scheduled for/);
    expect(enqueued).toEqual(rows.map((row) => row.id));
  });

  it('allow: both go on', async () => {
    const { rows } = await twoMinutes('allow');
    expect(rows.map((row) => row.status)).toEqual(['running', 'queued']);
  });
});

describe('failed runs', () => {
  it('retries a failed time once per allowed retry, then notifies job.failed once', async () => {
    const { scheduleId, customerId } = await serviceWithSchedule(db, { retries: 1 });
    const clock = { now: at(1_000) };
    const pair = replicas(clock);
    await pair.tick();
    const fail = async (id: string) =>
      db.serviceRun.update({ where: { id }, data: { status: 'failed', exitCode: 3, finishedAt: at(2_000) } });
    await fail((await rowsOf(scheduleId))[0]!.id);
    await pair.tick();
    const afterRetry = await rowsOf(scheduleId);
    expect(afterRetry.map((row) => [row.attempt, row.status])).toEqual([
      [1, 'failed'],
      [2, 'queued'],
    ]);
    expect(afterRetry[1]?.scheduledFor).toEqual(T0);
    expect(await deliveries(customerId, 'job.failed')).toHaveLength(0);
    await fail(afterRetry[1]!.id);
    await pair.tick();
    await pair.tick();
    expect(await rowsOf(scheduleId)).toHaveLength(2);
    const failed = await deliveries(customerId, 'job.failed');
    expect(failed).toHaveLength(1);
    expect(failed[0]?.body).toMatchObject({
      job: { run_id: afterRetry[1]!.id, exit_code: 3, status: 'failed' },
    });
    expect(pair.enqueued.has(afterRetry[1]!.id)).toBe(true);
  });
});

describe('runs no worker carries', () => {
  it('enqueues again a scheduled run still queued long after it was recorded (Redis emptied)', async () => {
    const { scheduleId } = await serviceWithSchedule(db, { cron: '0 0 1 1 *' });
    await db.serviceSchedule.update({ where: { id: scheduleId }, data: { enabled: false } });
    const run = await db.serviceRun.create({
      data: {
        serviceId: (await db.serviceSchedule.findUniqueOrThrow({ where: { id: scheduleId } })).serviceId,
        scheduleId,
        scheduledFor: at(-MINUTE),
        command: ['./job'],
        timeoutSeconds: 60,
        createdAt: new Date(Date.now() - 5 * MINUTE),
      },
    });
    const pair = replicas({ now: new Date() });
    await pair.tick();
    expect(pair.enqueued.has(run.id)).toBe(true);
  });
});
