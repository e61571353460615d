import { describe, expect, it } from 'vitest';
import { fakeApi, problemBody, run, type Handler } from '../test-support/fake-api.js';
import { jobRunBody } from '../test-support/job-runs.js';

const S = '3f1c2a4e-1111-4222-8333-444455556666';
const J = '9b1c2a4e-1111-4222-8333-444455556666';
const R = '5d1c2a4e-1111-4222-8333-444455556666';

const service = { id: S, name: 'shop', customer_id: 'c1', status: 'running' };
const schedule = (extra: object = {}) => ({
  id: J,
  service_id: S,
  name: 'nightly',
  cron: '30 2 * * *',
  time_zone: 'Europe/Berlin',
  command: ['sh', '-c', 'echo report && exit 0'],
  component: null,
  timeout: 600,
  retries: 0,
  overlap_policy: 'forbid',
  catch_up: 'one',
  enabled: true,
  next_run_at: '2026-11-29T01:30:00.000Z',
  last_run: null,
  created_at: '2026-11-28T00:00:00Z',
  updated_at: '2026-11-28T00:00:00Z',
  ...extra,
});
const jobRun = (extra: object = {}) =>
  jobRunBody({ id: R, serviceId: S }, ['sh', '-c', 'echo report && exit 0'], { schedule_id: J, ...extra });
/** The routes every command walks: SERVICE by name, then the service's schedules. */
const base: Record<string, Handler> = {
  'GET /api/services': [200, { data: [service], total: 1, page: 1, per_page: 100 }],
  [`GET /api/services/${S}/schedules`]: [200, { data: [schedule()] }],
};
const bodyOf = (api: ReturnType<typeof fakeApi>, method: string) =>
  JSON.parse(api.requests.find((request) => request.method === method)?.body ?? '{}') as unknown;

describe('schedules: reading', () => {
  it('list prints the schedules with their last run and their command quoted as an argv', async () => {
    const lastRun = {
      id: R,
      status: 'failed',
      exit_code: 3,
      duration_ms: 2500,
      scheduled_for: '2026-11-28T01:30:00.000Z',
      created_at: '2026-11-28T01:30:00.000Z',
      started_at: '2026-11-28T01:30:01.000Z',
      finished_at: '2026-11-28T01:30:03.500Z',
    };
    const api = fakeApi({
      ...base,
      [`GET /api/services/${S}/schedules`]: [
        200,
        { data: [schedule({ last_run: lastRun }), schedule({ id: 'j2', name: 'weekly' })] },
      ],
    });
    const result = await run(['schedules', 'list', 'shop'], api.fetchImpl);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /^NAME\s+CRON\s+TIME_ZONE\s+ENABLED\s+NEXT_RUN_AT\s+LAST_RUN\s+COMMAND\s+ID/,
    );
    expect(result.stdout).toContain('nightly  30 2 * * *  Europe/Berlin  true');
    expect(result.stdout).toMatch(/nightly .* failed \(exit 3\) 2026-11-28T01:30:01.000Z\s+sh -c/);
    expect(result.stdout).toMatch(/weekly .* never\s+sh -c "echo report && exit 0"/);
    const one = await run(['schedules', 'get', 'shop', 'nightly'], api.fetchImpl);
    expect(one.stdout).toContain(`last_run: failed (exit 3) 2026-11-28T01:30:01.000Z, run ${R}`);
  });

  it('get --json prints the API answer; a schedule the service lacks is exit 2 naming the ones it has', async () => {
    const api = fakeApi({ ...base });
    const found = await run(['schedules', 'get', 'shop', 'nightly', '--json'], api.fetchImpl);
    expect(found.code).toBe(0);
    expect(JSON.parse(found.stdout)).toEqual(schedule());
    const missing = await run(['schedules', 'get', 'shop', 'weekly'], api.fetchImpl);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(
      'service shop has no schedule named or with id "weekly" (it has nightly)',
    );
  });

  it('runs lists a schedule’s runs or, without SCHEDULE, every run of the service', async () => {
    const page = (rows: object[]) => [200, { data: rows, total: 41, page: 2, per_page: 20 }] as const;
    const api = fakeApi({
      ...base,
      [`GET /api/schedules/${J}/runs`]: [
        ...page([jobRun({ status: 'missed', scheduled_for: '2026-11-27T01:30:00Z', error: 'late' })]),
      ],
      [`GET /api/services/${S}/runs`]: [
        ...page([jobRun({ schedule_id: null, status: 'succeeded', exit_code: 0 })]),
      ],
    });
    const ofSchedule = await run(['schedules', 'runs', 'shop', 'nightly', '--page', '2'], api.fetchImpl);
    expect(ofSchedule.code).toBe(0);
    expect(ofSchedule.stdout).toMatch(/missed\s+-\s+-\s+scheduled\s+2026-11-27T01:30:00Z\s+-\s+late/);
    expect(ofSchedule.stderr).toContain('page 2: 1 of 41 runs');
    expect(api.requests.at(-1)?.url.searchParams.get('page')).toBe('2');
    const ofService = await run(['schedules', 'runs', 'shop'], api.fetchImpl);
    expect(ofService.stdout).toMatch(/succeeded\s+0\s+-\s+one-off/);
  });

  it('exits 5 when the key lacks the operate permission', async () => {
    const api = fakeApi({
      ...base,
      [`GET /api/services/${S}/schedules`]: [
        403,
        problemBody(403, 'forbidden', 'Forbidden', 'this key lacks the operate action'),
      ],
    });
    const result = await run(['schedules', 'list', 'shop'], api.fetchImpl);
    expect(result.code).toBe(5);
    expect(result.stderr).toContain('this key lacks the operate action');
  });
});

describe('schedules: changing', () => {
  it('create sends the argv after -- as it is, the flags as fields, and the idempotency key', async () => {
    const api = fakeApi({ ...base, [`POST /api/services/${S}/schedules`]: [201, schedule()] });
    const result = await run(
      [
        'schedules',
        'create',
        'shop',
        '--name',
        'nightly',
        '--cron',
        '30 2 * * *',
        '--time-zone',
        'Europe/Berlin',
        '--retries',
        '1',
        '--overlap',
        'replace',
        '--enabled',
        'false',
        '--idempotency-key',
        'k1',
        '--',
        'sh',
        '-c',
        'echo report && exit 0',
      ],
      api.fetchImpl,
    );
    expect(result).toMatchObject({
      code: 0,
      stdout: `schedule nightly (${J}) created; next run at 2026-11-29T01:30:00.000Z`,
    });
    expect(bodyOf(api, 'POST')).toEqual({
      name: 'nightly',
      cron: '30 2 * * *',
      time_zone: 'Europe/Berlin',
      retries: 1,
      overlap_policy: 'replace',
      enabled: false,
      command: ['sh', '-c', 'echo report && exit 0'],
    });
    expect(api.requests.at(-1)?.idempotencyKey).toBe('k1');
  });

  it.each([
    [['schedules', 'create', 'shop', '--name', 'x', '--cron', '* * * * *'], 'missing the command'],
    [['schedules', 'create', 'shop', '--cron', '* * * * *', '--', 'true'], '--name is required'],
    [
      ['schedules', 'create', 'shop', '--name', 'x', '--cron', '@daily', '--overlap', 'queue', '--', 'true'],
      '--overlap must be one of forbid, replace, allow',
    ],
    [['schedules', 'update', 'shop', 'nightly', '--enabled', 'no'], '--enabled must be one of true, false'],
    [['schedules', 'update', 'shop', 'nightly'], 'nothing to change'],
    [
      ['schedules', 'update', 'shop', 'nightly', '--retries', '9'],
      '--retries must be a whole number from 0 to 5',
    ],
    [['schedules', 'delete', 'shop', 'nightly'], 'add --yes'],
    [['schedules', 'run', 'shop', 'nightly', 'extra'], 'a schedule runs its own command'],
  ])('%j is a usage error (exit 2) that changes nothing', async (argv, message) => {
    const api = fakeApi({ ...base });
    const result = await run(argv, api.fetchImpl);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
    expect(api.requests.filter((request) => request.method !== 'GET')).toEqual([]);
  });

  it('update sends only what was given; --component "" goes back to the default', async () => {
    const api = fakeApi({
      ...base,
      [`PATCH /api/schedules/${J}`]: [
        200,
        schedule({ cron: '0 * * * *', enabled: false, next_run_at: null }),
      ],
    });
    const result = await run(
      ['schedules', 'update', 'shop', J, '--cron', '0 * * * *', '--component', '', '--enabled', 'false'],
      api.fetchImpl,
    );
    expect(result).toMatchObject({ code: 0, stdout: `schedule nightly (${J}) saved; disabled` });
    expect(bodyOf(api, 'PATCH')).toEqual({ cron: '0 * * * *', component: null, enabled: false });
  });

  it('a refused field is exit 1 with the API’s reason naming it', async () => {
    const api = fakeApi({
      ...base,
      [`PATCH /api/schedules/${J}`]: [
        400,
        problemBody(400, 'validation_failed', 'Validation failed', '/body/time_zone: unknown time zone'),
      ],
    });
    const result = await run(
      ['schedules', 'update', 'shop', 'nightly', '--time-zone', 'Mars/Base'],
      api.fetchImpl,
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('/body/time_zone: unknown time zone');
  });

  it('delete --yes deletes by name', async () => {
    const api = fakeApi({ ...base, [`DELETE /api/schedules/${J}`]: [204] });
    const result = await run(['schedules', 'delete', 'shop', 'nightly', '--yes'], api.fetchImpl);
    expect(result).toMatchObject({
      code: 0,
      stdout: `schedule nightly (${J}) deleted, with its run history`,
    });
  });
});

describe('schedules run', () => {
  it('prints the queued run’s id without --wait', async () => {
    const api = fakeApi({ ...base, [`POST /api/schedules/${J}/run-now`]: [202, jobRun()] });
    const result = await run(['schedules', 'run', 'shop', 'nightly'], api.fetchImpl);
    expect(result).toMatchObject({ code: 0, stdout: R });
    expect(result.stderr).toContain(`run ${R} of schedule nightly queued`);
  });

  it.each([
    [{ status: 'failed', exit_code: 3, output: 'report\nboom\n' }, 3],
    [{ status: 'succeeded', exit_code: 0, output: 'report\n' }, 0],
    [{ status: 'timed_out', exit_code: null, output: '' }, 3],
    [{ status: 'cancelled', exit_code: null, output: '', error: 'replaced by a newer run' }, 4],
  ])('--wait follows the run to %o and exits %i', async (final, code) => {
    const api = fakeApi({
      ...base,
      [`POST /api/schedules/${J}/run-now`]: [202, jobRun()],
      [`GET /api/runs/${R}`]: (_url, call) =>
        call === 1 ? [200, jobRun({ status: 'running' })] : [200, jobRun(final)],
    });
    const result = await run(['schedules', 'run', 'shop', 'nightly', '--wait'], api.fetchImpl);
    expect(result.code).toBe(code);
    expect(result.stdout).toBe(final.output.replace(/\n$/, ''));
    expect(result.stderr).toContain(`run ${R} ${final.status}`);
  });
});
