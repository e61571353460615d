import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, json, type Harness } from '../../test-support/harness.js';

// A service's backup schedule and retention without a worker (docs/backups.md#schedules): what the
// API accepts, refuses, shows and to whom. The harness runs with the default minimum interval (1 h).
let h: Harness;
let customerId: string;
let operator: { auth: string };

const NIGHTLY = {
  cron: '30 2 * * *',
  time_zone: 'Europe/Berlin',
  retention: { keep_last: 3, keep_daily: 7 },
};

beforeAll(async () => {
  h = await createHarness();
  customerId = (await h.customer()).id;
  operator = await h.user('operator', customerId);
});
afterAll(async () => h.close());

const service = async () => (await h.createService(operator.auth, { customer_id: customerId })).id;
const request = (
  method: 'GET' | 'PUT' | 'DELETE',
  serviceId: string,
  payload?: object,
  auth = operator.auth,
) =>
  h.app.inject({
    method,
    url: `/api/services/${serviceId}/backup-schedule`,
    headers: { authorization: auth },
    ...(payload ? { payload } : {}),
  });
const stored = (serviceId: string) => h.container.db.backupSchedule.findUnique({ where: { serviceId } });

describe('PUT /api/services/:id/backup-schedule', () => {
  it('stores the schedule with its retention and the next time read in its time zone', async () => {
    const serviceId = await service();
    const response = await request('PUT', serviceId, NIGHTLY);
    expect(response.statusCode, response.body).toBe(200);
    const schedule = json<{ next_run_at: string }>(response);
    expect(schedule).toMatchObject({
      service_id: serviceId,
      cron: '30 2 * * *',
      time_zone: 'Europe/Berlin',
      enabled: true,
      retention: { keep_last: 3, keep_daily: 7, keep_weekly: null, keep_monthly: null },
    });
    // 02:30 in Berlin is 00:30 or 01:30 UTC, within the next day.
    const next = new Date(schedule.next_run_at);
    expect(next.getUTCMinutes()).toBe(30);
    expect([0, 1]).toContain(next.getUTCHours());
    expect(next.getTime() - Date.now()).toBeLessThanOrEqual(24 * 3600 * 1000);
    expect(json(await request('GET', serviceId))).toEqual(schedule);
  });

  it('replaces it: a retention change keeps the cursor, a new expression or re-enabling starts from now', async () => {
    const serviceId = await service();
    await request('PUT', serviceId, NIGHTLY);
    // A cursor in the past (times not yet recorded) must survive a change of retention only.
    const past = new Date(Date.now() - 60_000);
    await h.container.db.backupSchedule.update({ where: { serviceId }, data: { nextRunAt: past } });
    const retentionOnly = await request('PUT', serviceId, { ...NIGHTLY, retention: { keep_last: 1 } });
    expect(json(retentionOnly)).toMatchObject({
      retention: { keep_last: 1, keep_daily: null },
      next_run_at: past.toISOString(),
    });
    const hourly = json<{ next_run_at: string }>(await request('PUT', serviceId, { cron: '0 * * * *' }));
    expect(hourly).toMatchObject({ time_zone: 'UTC', retention: { keep_last: null } });
    expect(new Date(hourly.next_run_at).getTime()).toBeGreaterThan(Date.now());
    const off = await request('PUT', serviceId, { cron: '0 * * * *', enabled: false });
    expect(json(off)).toMatchObject({ enabled: false, next_run_at: null });
    await h.container.db.backupSchedule.update({ where: { serviceId }, data: { nextRunAt: past } });
    const on = json<{ next_run_at: string }>(await request('PUT', serviceId, { cron: '0 * * * *' }));
    expect(new Date(on.next_run_at).getTime()).toBeGreaterThan(Date.now());
  });

  it('answers 200 to first PUTs racing each other, and keeps one schedule', async () => {
    const serviceId = await service();
    const responses = await Promise.all(
      [1, 2, 3, 4].map((keep) => request('PUT', serviceId, { ...NIGHTLY, retention: { keep_last: keep } })),
    );
    expect(responses.map((response) => response.statusCode)).toEqual([200, 200, 200, 200]);
    expect(await h.container.db.backupSchedule.count({ where: { serviceId } })).toBe(1);
  });

  it.each([
    ['an invalid cron expression', { cron: 'every night' }, '/body/cron'],
    ['times closer than the minimum interval', { cron: '*/5 * * * *' }, '/body/cron'],
    ['times a second apart', { cron: '* * * * * *' }, '/body/cron'],
    ['a date that never comes', { cron: '0 0 30 2 *' }, '/body/cron'],
    ['no cron', { cron: undefined }, 'cron'],
    ['an unknown time zone', { time_zone: 'Mars/Olympus_Mons' }, '/body/time_zone'],
    [
      'keep_last 0 (the backup just taken must stay)',
      { retention: { keep_last: 0 } },
      '/body/retention/keep_last',
    ],
    ['a negative keep_daily', { retention: { keep_daily: -1 } }, '/body/retention/keep_daily'],
    ['keep_weekly over 520', { retention: { keep_weekly: 521 } }, '/body/retention/keep_weekly'],
    ['keep_monthly of 1.5', { retention: { keep_monthly: 1.5 } }, '/body/retention/keep_monthly'],
    ['an unknown retention rule', { retention: { keep_yearly: 1 } }, 'keep_yearly'],
    ['an unknown field', { command: ['sh'] }, 'command'],
  ])('refuses %s with a problem naming the field, and stores nothing', async (_label, change, field) => {
    const serviceId = await service();
    const response = await request('PUT', serviceId, { ...NIGHTLY, ...change });
    expect(response.statusCode, response.body).toBe(400);
    expect(response.headers['content-type']).toMatch(/application\/problem\+json/);
    const problem = json<{ detail: string; errors?: { path: string }[] }>(response);
    expect(`${problem.detail} ${JSON.stringify(problem.errors ?? [])}`).toContain(field);
    expect(await stored(serviceId)).toBeNull();
  });
});

describe('GET and DELETE', () => {
  it('answers 404 naming the service while it has no schedule', async () => {
    const serviceId = await service();
    const response = await request('GET', serviceId);
    expect(response.statusCode).toBe(404);
    expect(json(response).detail).toContain('has no backup schedule');
    expect((await request('DELETE', serviceId)).statusCode).toBe(404);
  });

  it('deletes the schedule, not the backups it took', async () => {
    const serviceId = await service();
    await request('PUT', serviceId, NIGHTLY);
    const backup = await h.container.db.backup.create({
      data: { serviceId, customerId, status: 'succeeded', method: 'live', scheduledFor: new Date() },
    });
    expect((await request('DELETE', serviceId)).statusCode).toBe(204);
    expect(await stored(serviceId)).toBeNull();
    expect((await request('GET', serviceId)).statusCode).toBe(404);
    const listed = await h.app.inject({
      method: 'GET',
      url: `/api/services/${serviceId}/backups`,
      headers: { authorization: operator.auth },
    });
    expect(json<{ data: { id: string; scheduled_for: string }[] }>(listed).data).toEqual([
      expect.objectContaining({ id: backup.id, scheduled_for: backup.scheduledFor!.toISOString() }),
    ]);
  });
});

describe('scope', () => {
  it("answers 404 for another customer's service, and changes nothing", async () => {
    const serviceId = await service();
    await request('PUT', serviceId, NIGHTLY);
    const other = await h.user('admin', (await h.customer()).id);
    for (const [method, payload] of [
      ['GET'],
      ['PUT', { cron: '0 * * * *', retention: { keep_last: 1 } }],
      ['DELETE'],
    ] as const) {
      const response = await request(method, serviceId, payload, other.auth);
      expect({ method, status: response.statusCode }).toEqual({ method, status: 404 });
      expect(json(response).detail).toBe(`service ${serviceId} not found`);
    }
    expect(await stored(serviceId)).toMatchObject({ cron: NIGHTLY.cron, keepLast: 3 });
  });

  it('lets a viewer of the customer read it and refuses every change (403)', async () => {
    const serviceId = await service();
    const viewer = await h.user('viewer', customerId);
    expect((await request('PUT', serviceId, NIGHTLY, viewer.auth)).statusCode).toBe(403);
    expect(await stored(serviceId)).toBeNull();
    await request('PUT', serviceId, NIGHTLY);
    const read = await request('GET', serviceId, undefined, viewer.auth);
    expect(read.statusCode).toBe(200);
    expect(json(read)).toMatchObject({ retention: { keep_last: 3 } });
    expect((await request('PUT', serviceId, { cron: '0 * * * *' }, viewer.auth)).statusCode).toBe(403);
    expect((await request('DELETE', serviceId, undefined, viewer.auth)).statusCode).toBe(403);
    expect(await stored(serviceId)).toMatchObject({ cron: NIGHTLY.cron });
  });
});
