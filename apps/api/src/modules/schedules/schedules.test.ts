import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from '@hostctl/domain';
import { createHarness, json, type Harness } from '../../test-support/harness.js';
import { addDeployment } from '../../test-support/releases.js';

// Schedules without a worker: what the API accepts, refuses, shows and to whom (docs/jobs.md#schedules).
let h: Harness;
let customerId: string;
let operator: { auth: string };

const PLAN = {
  containers: [
    { name: 'web', image: 'local/busybox:1', environment: {}, labels: {}, volumes: [] },
    { name: 'worker', image: 'local/busybox:1', environment: {}, labels: {}, volumes: [] },
  ],
  volumes: [],
};
const NIGHTLY = {
  name: 'nightly-report',
  cron: '30 2 * * *',
  time_zone: 'Europe/Berlin',
  command: ['./report', '--all'],
};

beforeAll(async () => {
  h = await createHarness();
  customerId = (await h.customer()).id;
  operator = await h.user('operator', customerId);
});
afterAll(async () => h.close());

async function releasedService(): Promise<string> {
  const { id } = await h.createService(operator.auth, { customer_id: customerId });
  await addDeployment(h, id, { plan: PLAN });
  return id;
}

const request = (
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
  url: string,
  payload?: object,
  auth = operator.auth,
) => h.app.inject({ method, url, headers: { authorization: auth }, ...(payload ? { payload } : {}) });
const create = (serviceId: string, payload: object, auth = operator.auth) =>
  request('POST', `/api/services/${serviceId}/schedules`, payload, auth);

describe('POST /api/services/:id/schedules', () => {
  it('stores the schedule with its defaults and the next time read in its time zone', async () => {
    const serviceId = await releasedService();
    const response = await create(serviceId, NIGHTLY);
    expect(response.statusCode, response.body).toBe(201);
    const schedule = json<{ next_run_at: string }>(response);
    expect(schedule).toMatchObject({
      service_id: serviceId,
      name: 'nightly-report',
      cron: '30 2 * * *',
      time_zone: 'Europe/Berlin',
      command: ['./report', '--all'],
      component: null,
      timeout: 600,
      retries: 0,
      overlap_policy: 'forbid',
      catch_up: 'one',
      enabled: true,
    });
    // 02:30 in Berlin is 00:30 or 01:30 UTC, within the next day.
    const next = new Date(schedule.next_run_at);
    expect(next.getUTCMinutes()).toBe(30);
    expect([0, 1]).toContain(next.getUTCHours());
    expect(next.getTime() - Date.now()).toBeLessThanOrEqual(24 * 3600 * 1000);
    const list = await request('GET', `/api/services/${serviceId}/schedules`);
    expect(json<{ data: { id: string }[] }>(list).data.map((s) => s.id)).toEqual([json(response).id]);
  });

  it.each([
    ['an invalid cron expression', { cron: 'every night' }, '/body/cron'],
    ['a minute of 61', { cron: '61 * * * *' }, '/body/cron'],
    ['times a second apart', { cron: '* * * * * *' }, '/body/cron'],
    ['a date that never comes', { cron: '0 0 30 2 *' }, '/body/cron'],
    ['an unknown time zone', { time_zone: 'Mars/Olympus_Mons' }, '/body/time_zone'],
    ['an unknown component', { component: 'db' }, '/body/component'],
    ['an empty command', { command: [] }, '/body/command'],
    ['an empty program', { command: ['  ', 'x'] }, '/body/command'],
    ['a shell string', { command: 'echo hi && rm -rf /' }, '/body/command'],
    ['too many arguments', { command: Array.from({ length: 257 }, () => 'x') }, '/body/command'],
    ['an oversize command', { command: Array.from({ length: 9 }, () => 'x'.repeat(8000)) }, '/body/command'],
    ['retries over 5', { retries: 6 }, '/body/retries'],
    ['an unknown overlap policy', { overlap_policy: 'queue' }, '/body/overlap_policy'],
    ['a name that is not a label', { name: 'Nightly Report' }, '/body/name'],
    ['an unknown field', { shell: true }, 'shell'],
  ])('refuses %s with a problem naming the field, and stores nothing', async (_label, change, field) => {
    const serviceId = await releasedService();
    const response = await create(serviceId, { ...NIGHTLY, ...change });
    expect(response.statusCode, response.body).toBe(400);
    expect(response.headers['content-type']).toMatch(/application\/problem\+json/);
    const problem = json<{ detail: string; errors?: { path: string }[] }>(response);
    expect(`${problem.detail} ${JSON.stringify(problem.errors ?? [])}`).toContain(field);
    expect(await h.container.db.serviceSchedule.count({ where: { serviceId } })).toBe(0);
  });

  it('accepts seconds when they respect the minimum interval', async () => {
    const response = await create(await releasedService(), { ...NIGHTLY, cron: '15 */5 * * * *' });
    expect(response.statusCode, response.body).toBe(201);
  });

  it('refuses a second schedule of the same name (409)', async () => {
    const serviceId = await releasedService();
    expect((await create(serviceId, NIGHTLY)).statusCode).toBe(201);
    const again = await create(serviceId, NIGHTLY);
    expect(again.statusCode).toBe(409);
    expect(json(again).code).toBe('name_taken');
  });

  it(`holds at most ${LIMITS.schedulesPerService} schedules per service, even when created in parallel`, async () => {
    const serviceId = await releasedService();
    const attempts = LIMITS.schedulesPerService + 5;
    const responses = await Promise.all(
      Array.from({ length: attempts }, (_, i) => create(serviceId, { ...NIGHTLY, name: `job-${i}` })),
    );
    const statuses = responses.map((r) => r.statusCode);
    expect(statuses.filter((s) => s === 201)).toHaveLength(LIMITS.schedulesPerService);
    expect(statuses.filter((s) => s === 409)).toHaveLength(5);
    const refused = responses.find((r) => r.statusCode === 409)!;
    expect(json(refused).detail).toMatch(/the most one service may have/);
    expect(await h.container.db.serviceSchedule.count({ where: { serviceId } })).toBe(
      LIMITS.schedulesPerService,
    );
  });
});

describe('a schedule by id', () => {
  it('changes, disables (no next time) and re-reads its next time from a new expression', async () => {
    const serviceId = await releasedService();
    const id = json(await create(serviceId, NIGHTLY)).id as string;
    const hourly = await request('PATCH', `/api/schedules/${id}`, {
      cron: '0 * * * *',
      time_zone: 'UTC',
      retries: 2,
    });
    expect(hourly.statusCode, hourly.body).toBe(200);
    const next = new Date(json<{ next_run_at: string }>(hourly).next_run_at);
    expect(next.getUTCMinutes()).toBe(0);
    expect(next.getTime() - Date.now()).toBeLessThanOrEqual(3600 * 1000);
    expect(json(hourly)).toMatchObject({ retries: 2, command: NIGHTLY.command });
    const disabled = await request('PATCH', `/api/schedules/${id}`, { enabled: false });
    expect(json(disabled)).toMatchObject({ enabled: false, next_run_at: null });
    const bad = await request('PATCH', `/api/schedules/${id}`, { time_zone: 'Europe/Atlantis' });
    expect(bad.statusCode).toBe(400);
    expect(json(bad).detail).toContain('/body/time_zone');
    expect(json(await request('GET', `/api/schedules/${id}`))).toMatchObject({ time_zone: 'UTC' });
  });

  it('runs now as a run of the schedule, listed in its history and the service’s', async () => {
    const serviceId = await releasedService();
    const id = json(await create(serviceId, { ...NIGHTLY, component: 'worker', timeout: 120 })).id as string;
    const run = await request('POST', `/api/schedules/${id}/run-now`);
    expect(run.statusCode, run.body).toBe(202);
    expect(json(run)).toMatchObject({
      schedule_id: id,
      scheduled_for: null,
      attempt: 1,
      command: NIGHTLY.command,
      component: 'worker',
      timeout: 120,
      status: 'queued',
    });
    const job = await h.container.producer.queue('runs').getJob(`run.${json(run).id as string}`);
    expect(job?.data).toEqual({ runId: json(run).id });
    const history = await request('GET', `/api/schedules/${id}/runs?per_page=5`);
    expect(json(history)).toMatchObject({ total: 1, page: 1, per_page: 5 });
    const serviceHistory = await request('GET', `/api/services/${serviceId}/runs`);
    expect(json<{ data: { schedule_id: string }[] }>(serviceHistory).data[0]?.schedule_id).toBe(id);
  });

  it('deletes the schedule and its history', async () => {
    const serviceId = await releasedService();
    const id = json(await create(serviceId, NIGHTLY)).id as string;
    await request('POST', `/api/schedules/${id}/run-now`);
    expect((await request('DELETE', `/api/schedules/${id}`)).statusCode).toBe(204);
    expect((await request('GET', `/api/schedules/${id}`)).statusCode).toBe(404);
    expect(await h.container.db.serviceRun.count({ where: { scheduleId: id } })).toBe(0);
  });
});

describe('scope', () => {
  it("answers 404 for another customer's service and schedule, and changes nothing", async () => {
    const serviceId = await releasedService();
    const id = json(await create(serviceId, NIGHTLY)).id as string;
    const other = await h.user('admin', (await h.customer()).id);
    expect((await create(serviceId, { ...NIGHTLY, name: 'theirs' }, other.auth)).statusCode).toBe(404);
    for (const [method, url, payload] of [
      ['GET', `/api/services/${serviceId}/schedules`],
      ['GET', `/api/schedules/${id}`],
      ['PATCH', `/api/schedules/${id}`, { command: ['sh', '-c', 'curl evil'] }],
      ['POST', `/api/schedules/${id}/run-now`],
      ['GET', `/api/schedules/${id}/runs`],
      ['DELETE', `/api/schedules/${id}`],
    ] as const)
      expect({ method, url, status: (await request(method, url, payload, other.auth)).statusCode }).toEqual({
        method,
        url,
        status: 404,
      });
    expect(await h.container.db.serviceRun.count({ where: { scheduleId: id } })).toBe(0);
    expect(json(await request('GET', `/api/schedules/${id}`))).toMatchObject({ command: NIGHTLY.command });
  });

  it('refuses a viewer of the customer every schedule route (403), reads included', async () => {
    const serviceId = await releasedService();
    const viewer = await h.user('viewer', customerId);
    const refused = await create(serviceId, NIGHTLY, viewer.auth);
    expect(refused.statusCode).toBe(403);
    expect(
      (await request('GET', `/api/services/${serviceId}/schedules`, undefined, viewer.auth)).statusCode,
    ).toBe(403);
    expect(await h.container.db.serviceSchedule.count({ where: { serviceId } })).toBe(0);
  });
});
