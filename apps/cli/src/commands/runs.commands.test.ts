import { describe, expect, it } from 'vitest';
import { fakeApi, problemBody, run, type Handler } from '../test-support/fake-api.js';
import { jobRunBody } from '../test-support/job-runs.js';

const S = '3f1c2a4e-1111-4222-8333-444455556666';
const R = '5d1c2a4e-1111-4222-8333-444455556666';
const J = '9b1c2a4e-1111-4222-8333-444455556666';

const jobRun = (extra: object = {}) =>
  jobRunBody({ id: R, serviceId: S }, ['sh', '-c', 'echo "migrating"; exit 3'], extra);
const FAILED = {
  status: 'failed',
  exit_code: 3,
  duration_ms: 2500,
  started_at: '2026-11-28T00:00:01.000Z',
  finished_at: '2026-11-28T00:00:03.500Z',
  output: 'migrating\nboom\n',
};
const service = { id: S, name: 'shop', customer_id: 'c1', status: 'running' };

describe('runs get', () => {
  it('prints status, exit code, duration and output, and exits 0 for a run it could read', async () => {
    const api = fakeApi({ [`GET /api/runs/${R}`]: [200, jobRun(FAILED)] });
    const result = await run(['runs', 'get', R], api.fetchImpl);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`id: ${R}`);
    expect(result.stdout).toContain('status: failed');
    expect(result.stdout).toContain('exit_code: 3');
    expect(result.stdout).toContain('duration: 2.5 s');
    expect(result.stdout).toContain('trigger: one-off');
    expect(result.stdout).toContain('command: sh -c "echo \\"migrating\\"; exit 3"');
    expect(result.stdout).toMatch(/output:\nmigrating\nboom$/);
    // One read: no waiting unless asked.
    expect(api.requests).toHaveLength(1);
    expect(api.requests[0]?.url.searchParams.get('wait')).toBeNull();
  });

  it('--json prints the API answer as it is', async () => {
    const api = fakeApi({ [`GET /api/runs/${R}`]: [200, jobRun({ ...FAILED, schedule_id: J })] });
    const result = await run(['runs', 'get', R, '--json'], api.fetchImpl);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual(jobRun({ ...FAILED, schedule_id: J }));
  });

  it('says a run still going has no output yet, and that a long one was cut', async () => {
    const api = fakeApi({
      [`GET /api/runs/${R}`]: (_url, call) =>
        call === 1
          ? [200, jobRun({ status: 'running', started_at: '2026-11-28T00:00:01Z' })]
          : [200, jobRun({ ...FAILED, output_truncated: true })],
    });
    const going = await run(['runs', 'get', R], api.fetchImpl);
    expect(going.stdout).toContain('status: running');
    expect(going.stdout).toContain('output: (shown once the run ends)');
    const cut = await run(['runs', 'get', R], api.fetchImpl);
    expect(cut.stderr).toContain('only its end is shown');
  });

  it.each([
    [{ ...FAILED }, 3],
    [{ ...FAILED, status: 'succeeded', exit_code: 0 }, 0],
    [{ ...FAILED, status: 'timed_out', exit_code: null }, 3],
    [{ ...FAILED, status: 'cancelled', exit_code: null }, 4],
    [{ ...FAILED, status: 'failed', exit_code: null, error: 'the image is gone' }, 1],
  ])('--wait follows the run to its end and exits as hostctl run does: %o', async (final, code) => {
    const api = fakeApi({
      [`GET /api/runs/${R}`]: (_url, call) => [
        200,
        call === 1 ? jobRun({ status: 'queued' }) : jobRun(final),
      ],
    });
    const result = await run(['runs', 'get', R, '--wait'], api.fetchImpl);
    expect(result.code).toBe(code);
    expect(result.stdout).toBe('migrating\nboom');
    expect(api.requests.at(-1)?.url.searchParams.get('wait')).toBe('30');
  });

  it.each([
    [['runs', 'get'], 'missing RUN'],
    [['runs', 'get', R, 'extra'], 'unexpected argument "extra"'],
    [['runs', 'get', R, '--follow'], '--follow'],
  ])('is a usage error (2) without asking the API: %j', async (argv, message) => {
    const api = fakeApi({});
    const result = await run(argv, api.fetchImpl);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
    expect(api.requests).toHaveLength(0);
  });

  it('exits 1 for a run it cannot see and 5 without the operate permission', async () => {
    const missing = fakeApi({
      [`GET /api/runs/${R}`]: [404, problemBody(404, 'not_found', 'Not Found', `run ${R} not found`)],
    });
    const notFound = await run(['runs', 'get', R], missing.fetchImpl);
    expect(notFound.code).toBe(1);
    expect(notFound.stderr).toContain(`run ${R} not found`);
    const forbidden = fakeApi({
      [`GET /api/runs/${R}`]: [403, problemBody(403, 'forbidden', 'Forbidden', 'needs services:operate')],
    });
    const refused = await run(['runs', 'get', R], forbidden.fetchImpl);
    expect(refused.code).toBe(5);
    expect(refused.stderr).toContain('needs services:operate');
  });
});

describe('runs list', () => {
  const history = {
    data: [
      jobRun({ ...FAILED, schedule_id: J, scheduled_for: '2026-11-28T00:00:00Z' }),
      jobRun({ id: 'r2', status: 'succeeded', exit_code: 0, duration_ms: 40 }),
    ],
    total: 42,
    page: 2,
    per_page: 2,
  };
  const routes: Record<string, Handler> = {
    'GET /api/services': [200, { data: [service], total: 1, page: 1, per_page: 100 }],
    [`GET /api/services/${S}/runs`]: [200, history],
  };

  it('prints every run of the service newest first, and which page of how many', async () => {
    const api = fakeApi({ ...routes });
    const result = await run(['runs', 'list', 'shop', '--page', '2', '--per-page', '2'], api.fetchImpl);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^ID\s+STATUS\s+EXIT_CODE\s+DURATION_MS\s+TRIGGER/);
    expect(result.stdout).toMatch(/failed\s+3\s+2500\s+scheduled\s+2026-11-28T00:00:00Z/);
    expect(result.stdout).toMatch(/r2\s+succeeded\s+0\s+40\s+one-off/);
    expect(result.stderr).toContain('page 2: 2 of 42 runs');
    const asked = api.requests.at(-1)!.url.searchParams;
    expect([asked.get('page'), asked.get('per_page')]).toEqual(['2', '2']);
  });

  it('--json prints the API page', async () => {
    const api = fakeApi({ ...routes });
    const result = await run(['runs', 'list', 'shop', '--json'], api.fetchImpl);
    expect(JSON.parse(result.stdout)).toEqual(history);
  });

  it('is a usage error (2) for a missing or unknown SERVICE and a bad page size', async () => {
    const api = fakeApi({ 'GET /api/services': [200, { data: [], total: 0, page: 1, per_page: 100 }] });
    expect((await run(['runs', 'list'], api.fetchImpl)).code).toBe(2);
    const unknown = await run(['runs', 'list', 'nope'], api.fetchImpl);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('nope');
    expect((await run(['runs', 'list', 'shop', '--per-page', '500'], api.fetchImpl)).code).toBe(2);
    expect(api.requests.some((request) => request.url.pathname.endsWith('/runs'))).toBe(false);
  });
});
