import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, json, type Harness } from '../../test-support/harness.js';

// Scheduled restore tests at the API, without a worker (docs/backups.md#verification): the
// schedule's verify_cron, read and bounded like its cron, with a cursor of its own; and the
// service's last verified backup on its backups list, whatever page is read.
let h: Harness;
let customerId: string;
let operator: { auth: string };

beforeAll(async () => {
  h = await createHarness();
  customerId = (await h.customer()).id;
  operator = await h.user('operator', customerId);
});
afterAll(async () => h.close());

const service = async () => (await h.createService(operator.auth, { customer_id: customerId })).id;
const put = (serviceId: string, payload: object) =>
  h.app.inject({
    method: 'PUT',
    url: `/api/services/${serviceId}/backup-schedule`,
    headers: { authorization: operator.auth },
    payload,
  });
const get = (url: string) => h.app.inject({ method: 'GET', url, headers: { authorization: operator.auth } });
const stored = (serviceId: string) =>
  h.container.db.backupSchedule.findUniqueOrThrow({ where: { serviceId } });

describe('verify_cron on the backup schedule', () => {
  it("stores the check's time read in the schedule's zone, keeps its cursor on other changes, and clears it", async () => {
    const serviceId = await service();
    const response = await put(serviceId, {
      cron: '30 2 * * *',
      time_zone: 'Asia/Kolkata',
      verify_cron: '0 5 * * 0',
    });
    expect(response.statusCode, response.body).toBe(200);
    const schedule = json<{ verify_cron: string; verify_next_run_at: string }>(response);
    expect(schedule.verify_cron).toBe('0 5 * * 0');
    // Sunday 05:00 in Kolkata (UTC+5:30) is Saturday 23:30 UTC, within the next week.
    const next = new Date(schedule.verify_next_run_at);
    expect([next.getUTCDay(), next.getUTCHours(), next.getUTCMinutes()]).toEqual([6, 23, 30]);
    expect((await stored(serviceId)).verifyNextRunAt).toEqual(next);
    expect(json(await get(`/api/services/${serviceId}/backup-schedule`))).toEqual(schedule);

    // A retention change keeps the check's cursor where the scheduler left it.
    const cursor = new Date(Date.now() + 3_600_000);
    await h.container.db.backupSchedule.update({ where: { serviceId }, data: { verifyNextRunAt: cursor } });
    const kept = await put(serviceId, {
      cron: '30 2 * * *',
      time_zone: 'Asia/Kolkata',
      verify_cron: '0 5 * * 0',
      retention: { keep_last: 2 },
    });
    expect(json<{ verify_next_run_at: string }>(kept).verify_next_run_at).toBe(cursor.toISOString());

    const cleared = await put(serviceId, { cron: '30 2 * * *', time_zone: 'Asia/Kolkata' });
    expect(json(cleared)).toMatchObject({ verify_cron: null, verify_next_run_at: null });
    expect(await stored(serviceId)).toMatchObject({ verifyCron: null, verifyNextRunAt: null });
  });

  it.each([
    ['too often', '*/5 * * * *', 'at most every 3600 s'],
    ['not an expression', 'every sunday', 'invalid cron expression'],
  ])(
    'refuses a verify_cron %s naming /body/verify_cron, storing nothing',
    async (_label, verifyCron, message) => {
      const serviceId = await service();
      const response = await put(serviceId, { cron: '30 2 * * *', verify_cron: verifyCron });
      expect(response.statusCode).toBe(400);
      expect(json(response)).toMatchObject({
        errors: [{ path: '/body/verify_cron', message: expect.stringContaining(message) as string }],
      });
      expect(await h.container.db.backupSchedule.findUnique({ where: { serviceId } })).toBeNull();
    },
  );
});

describe('the last verified backup of a service', () => {
  it('is the newest succeeded backup whose check passed, of all pages', async () => {
    const serviceId = await service();
    const listed = () => get(`/api/services/${serviceId}/backups?per_page=1`);
    expect(json(await listed())).toMatchObject({ last_verified: null });
    const db = h.container.db;
    const backup = (minutesAgo: number, fields: object) =>
      db.backup.create({
        data: {
          serviceId,
          customerId,
          status: 'succeeded',
          method: 'live',
          createdAt: new Date(Date.now() - minutesAgo * 60_000),
          ...fields,
        },
      });
    const verifiedAt = new Date(Date.now() - 60_000);
    const passed = await backup(50, { verifyStatus: 'passed', verifiedAt });
    // Newer ones that do not count: an expired one that had passed, a failed check, no check yet.
    await backup(40, { status: 'expired', verifyStatus: 'passed', verifiedAt });
    await backup(30, { verifyStatus: 'failed', verifiedAt });
    await backup(20, {});

    const page = json<{ data: { id: string }[]; last_verified: unknown }>(await listed());
    expect(page.data).toHaveLength(1);
    expect(page.last_verified).toEqual({
      backup_id: passed.id,
      taken_at: passed.createdAt.toISOString(),
      verified_at: verifiedAt.toISOString(),
    });
  });
});
