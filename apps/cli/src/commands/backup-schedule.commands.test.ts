import { describe, expect, it } from 'vitest';
import { fakeApi, run } from '../test-support/fake-api.js';

const SERVICE = '3f1c2a4e-1111-4222-8333-444455556666';
const SCHEDULE = { service_id: SERVICE, cron: '0 3 * * *', time_zone: 'UTC', enabled: true };

describe('hostctl backups schedule', () => {
  it('sets the schedule with the retention flags given and nothing else', async () => {
    const api = fakeApi({
      [`GET /api/services/${SERVICE}`]: [200, { id: SERVICE, name: 'db' }],
      [`PUT /api/services/${SERVICE}/backup-schedule`]: [200, SCHEDULE],
    });
    const result = await run(
      [
        'backups',
        'schedule',
        SERVICE,
        '--cron',
        '0 3 * * *',
        '--time-zone',
        'Europe/Berlin',
        '--keep-last',
        '3',
      ],
      api.fetchImpl,
    );
    expect(result.code).toBe(0);
    const put = api.requests.find((r) => r.method === 'PUT');
    expect(JSON.parse(put?.body ?? '{}')).toEqual({
      cron: '0 3 * * *',
      time_zone: 'Europe/Berlin',
      retention: { keep_last: 3 },
    });
  });

  it('sends --verify-cron as the schedule of restore tests (docs/backups.md#verification)', async () => {
    const api = fakeApi({
      [`GET /api/services/${SERVICE}`]: [200, { id: SERVICE, name: 'db' }],
      [`PUT /api/services/${SERVICE}/backup-schedule`]: [200, { ...SCHEDULE, verify_cron: '0 5 * * 0' }],
    });
    const result = await run(
      ['backups', 'schedule', SERVICE, '--cron', '0 3 * * *', '--verify-cron', '0 5 * * 0'],
      api.fetchImpl,
    );
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('verify_cron: 0 5 * * 0');
    const put = api.requests.find((r) => r.method === 'PUT');
    expect(JSON.parse(put?.body ?? '{}')).toEqual({
      cron: '0 3 * * *',
      verify_cron: '0 5 * * 0',
      retention: {},
    });
  });

  it('shows the schedule without --cron, and refuses other flags without it (exit 2, no request)', async () => {
    const api = fakeApi({
      [`GET /api/services/${SERVICE}`]: [200, { id: SERVICE, name: 'db' }],
      [`GET /api/services/${SERVICE}/backup-schedule`]: [200, SCHEDULE],
    });
    const shown = await run(['backups', 'schedule', SERVICE], api.fetchImpl);
    expect(shown).toMatchObject({ code: 0 });
    expect(shown.stdout).toContain('cron: 0 3 * * *');
    const refused = await run(['backups', 'schedule', SERVICE, '--keep-last', '3'], api.fetchImpl);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--cron is required');
    expect(api.requests.some((r) => r.method === 'PUT')).toBe(false);
  });

  it('removes it', async () => {
    const api = fakeApi({
      [`GET /api/services/${SERVICE}`]: [200, { id: SERVICE, name: 'db' }],
      [`DELETE /api/services/${SERVICE}/backup-schedule`]: [204],
    });
    expect((await run(['backups', 'unschedule', SERVICE], api.fetchImpl)).code).toBe(0);
    expect(api.requests.map((r) => r.method)).toContain('DELETE');
  });
});
