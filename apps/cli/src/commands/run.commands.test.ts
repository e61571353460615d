import { describe, expect, it } from 'vitest';
import { fakeApi, run } from '../test-support/fake-api.js';
import { jobRunBody } from '../test-support/job-runs.js';

const S = '3f1c2a4e-1111-4222-8333-444455556666';
const R = '5d1c2a4e-1111-4222-8333-444455556666';

const jobRun = (extra: object = {}) => jobRunBody({ id: R, serviceId: S }, ['sh', '-c', 'exit 3'], extra);

// `hostctl run` shares its waiting with `schedules run --wait` (followRun); the e2e suite runs it
// against a real worker, these pin the exit codes without one.
describe('run', () => {
  it.each([
    [{ status: 'failed', exit_code: 3, output: 'migrating\nboom\n', duration_ms: 40 }, 3],
    [{ status: 'succeeded', exit_code: 0, output: 'done\n', duration_ms: 40 }, 0],
    [{ status: 'failed', exit_code: null, output: '', error: 'the image is gone' }, 1],
  ])('prints the output and exits with the command’s code: %o', async (final, code) => {
    const api = fakeApi({
      [`GET /api/services/${S}`]: [200, { id: S, name: 'shop' }],
      [`POST /api/services/${S}/runs`]: [202, jobRun()],
      [`GET /api/runs/${R}`]: [200, jobRun(final)],
    });
    const result = await run(['run', S, '--timeout', '60', '--', 'sh', '-c', 'exit 3'], api.fetchImpl);
    expect(result.code).toBe(code);
    expect(result.stdout).toBe(final.output.replace(/\n$/, ''));
    expect(JSON.parse(api.requests[1]?.body ?? '{}')).toEqual({
      command: ['sh', '-c', 'exit 3'],
      timeout: 60,
    });
    expect(api.requests.at(-1)?.url.searchParams.get('wait')).toBe('30');
  });
});
