import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '@hostctl/auth-policy';
import {
  createDatabase,
  createRunsStore,
  createSchedulesStore,
  createServicesStore,
  keyringFromSettings,
  type Database,
} from '@hostctl/db';
import { createHarness, json, type Harness } from '../../test-support/harness.js';
import { addDeployment } from '../../test-support/releases.js';
import { createRunsService } from '../runs/runs.service.js';
import { createSchedulesService } from './schedules.service.js';

// Each schedule shows its latest record (docs/jobs.md#schedules), read for the whole list at once:
// the Jobs tab shows it per row, and a list must not ask the database once per schedule.
let h: Harness;
let customerId: string;
let operator: { auth: string };

const PLAN = {
  containers: [{ name: 'web', image: 'local/busybox:1', environment: {}, labels: {}, volumes: [] }],
  volumes: [],
};
const at = (minute: number) => new Date(Date.UTC(2026, 10, 28, 12, minute));

beforeAll(async () => {
  h = await createHarness();
  customerId = (await h.customer()).id;
  operator = await h.user('operator', customerId);
});
afterAll(async () => h.close());

const get = (url: string) => h.app.inject({ method: 'GET', url, headers: { authorization: operator.auth } });

async function serviceWithSchedules(names: string[]): Promise<{ serviceId: string; ids: string[] }> {
  const { id: serviceId } = await h.createService(operator.auth, { customer_id: customerId });
  await addDeployment(h, serviceId, { plan: PLAN });
  const ids: string[] = [];
  for (const name of names) {
    const response = await h.app.inject({
      method: 'POST',
      url: `/api/services/${serviceId}/schedules`,
      headers: { authorization: operator.auth },
      payload: { name, cron: '*/5 * * * *', command: ['./job'] },
    });
    expect(response.statusCode, response.body).toBe(201);
    expect(json(response).last_run).toBeNull();
    ids.push(json(response).id as string);
  }
  return { serviceId, ids };
}

/** A record as the worker's scheduler and run processor leave it. */
function addRun(serviceId: string, scheduleId: string | null, minute: number, extra: object = {}) {
  return h.container.db.serviceRun.create({
    data: {
      serviceId,
      scheduleId,
      command: ['./job'],
      timeoutSeconds: 600,
      createdAt: at(minute),
      scheduledFor: scheduleId ? at(minute) : null,
      ...extra,
    },
  });
}

describe('a schedule’s last run', () => {
  it('is the newest record of each schedule, in the list and by id; null before the first', async () => {
    const { serviceId, ids } = await serviceWithSchedules(['backup', 'cleanup', 'report']);
    const [backup, cleanup, report] = ids as [string, string, string];
    await addRun(serviceId, backup, 0, {
      status: 'succeeded',
      exitCode: 0,
      startedAt: at(0),
      finishedAt: at(1),
    });
    const failed = await addRun(serviceId, backup, 5, {
      status: 'failed',
      exitCode: 3,
      startedAt: at(5),
      finishedAt: new Date(at(5).getTime() + 2500),
    });
    const missed = await addRun(serviceId, cleanup, 10, { status: 'missed', error: 'no worker ran it' });
    // Newer records that are not these schedules’: a one-off run, another service's schedule.
    await addRun(serviceId, null, 20, { status: 'running', startedAt: at(20) });
    const other = await serviceWithSchedules(['backup']);
    await addRun(other.serviceId, other.ids[0]!, 30, { status: 'queued' });

    const list = json<{ data: { id: string; name: string; last_run: unknown; next_run_at: string }[] }>(
      await get(`/api/services/${serviceId}/schedules`),
    );
    const byName = Object.fromEntries(list.data.map((schedule) => [schedule.name, schedule]));
    expect(byName.backup?.last_run).toEqual({
      id: failed.id,
      status: 'failed',
      exit_code: 3,
      duration_ms: 2500,
      scheduled_for: at(5).toISOString(),
      created_at: at(5).toISOString(),
      started_at: at(5).toISOString(),
      finished_at: new Date(at(5).getTime() + 2500).toISOString(),
    });
    expect(byName.cleanup?.last_run).toEqual({
      id: missed.id,
      status: 'missed',
      exit_code: null,
      duration_ms: null,
      scheduled_for: at(10).toISOString(),
      created_at: at(10).toISOString(),
      started_at: null,
      finished_at: null,
    });
    expect(byName.report?.last_run).toBeNull();
    // The next scheduled time sits beside it: a five-minute mark after now.
    expect(new Date(byName.report!.next_run_at).getUTCMinutes() % 5).toBe(0);

    const one = json(await get(`/api/schedules/${backup}`));
    expect(one.last_run).toEqual(byName.backup?.last_run);
    expect(json(await get(`/api/schedules/${report}`)).last_run).toBeNull();
    // A run now is a record of the schedule too: it becomes the last run at once.
    const now = await h.app.inject({
      method: 'POST',
      url: `/api/schedules/${cleanup}/run-now`,
      headers: { authorization: operator.auth },
    });
    expect(now.statusCode, now.body).toBe(202);
    expect(json(await get(`/api/schedules/${cleanup}`)).last_run).toMatchObject({
      id: json(now).id,
      status: 'queued',
      scheduled_for: null,
    });
  });
});

describe('the list’s statements', () => {
  let counted: Database;
  let statements = 0;

  beforeAll(() => {
    counted = createDatabase({ url: h.config.DATABASE_URL, keys: keyringFromSettings(h.config), max: 2 });
    // Every statement, Prisma's included, goes through the pool's query (the pg adapter's path).
    const query = counted.sql.query.bind(counted.sql) as (...args: unknown[]) => unknown;
    (counted.sql as unknown as { query: (...args: unknown[]) => unknown }).query = (...args) => {
      statements += 1;
      return query(...args);
    };
  });
  afterAll(async () => counted.db.$disconnect());

  it('are as many for twenty schedules as for one (no query per schedule)', async () => {
    const runs = createRunsStore(counted.db);
    const service = createSchedulesService({
      schedules: createSchedulesStore(counted.db),
      services: createServicesStore(counted.db, counted.sql, counted.vault),
      runs,
      runsService: createRunsService({
        runs,
        services: createServicesStore(counted.db, counted.sql, counted.vault),
        enqueueRun: async () => undefined,
      }),
      minIntervalSeconds: 60,
    });
    const principal: Principal = {
      userId: 'test',
      email: 't@example.test',
      role: 'admin',
      customerId: null,
      via: 'api_key',
    };
    const listStatements = async (serviceId: string) => {
      const before = statements;
      const list = await service.list(principal, serviceId);
      return { statements: statements - before, withLastRun: list.data.filter((s) => s.last_run).length };
    };

    const one = await serviceWithSchedules(['only']);
    await addRun(one.serviceId, one.ids[0]!, 1, { status: 'succeeded', exitCode: 0 });
    const many = await serviceWithSchedules(Array.from({ length: 20 }, (_, i) => `job-${i}`));
    for (const [i, id] of many.ids.entries())
      await addRun(many.serviceId, id, i, { status: 'failed', exitCode: i });

    await listStatements(one.serviceId); // a warm pool: no connection set-up counted below
    const few = await listStatements(one.serviceId);
    const lots = await listStatements(many.serviceId);
    expect(few.withLastRun).toBe(1);
    expect(lots.withLastRun).toBe(20);
    expect(lots.statements).toBe(few.statements);
    // The service's check, the schedules, their last runs.
    expect(few.statements).toBe(3);
  });
});
