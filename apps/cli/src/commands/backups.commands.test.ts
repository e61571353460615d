import { describe, expect, it } from 'vitest';
import { fakeApi, run } from '../test-support/fake-api.js';

const SERVICE = '3f1c2a4e-1111-4222-8333-444455556666';
const BACKUP = '9a1c2a4e-1111-4222-8333-444455556666';
const RESTORE = '7b1c2a4e-1111-4222-8333-444455556666';
const runOf = (id: string, status: string, error: string | null = null) => ({ id, status, error, log: '' });

describe('hostctl backups and restore', () => {
  it('backs a service up and waits until the backup succeeded', async () => {
    const api = fakeApi({
      [`GET /api/services/${SERVICE}`]: [200, { id: SERVICE, name: 'db' }],
      [`POST /api/services/${SERVICE}/backups`]: [202, runOf(BACKUP, 'queued')],
      [`GET /api/backups/${BACKUP}`]: (_url, call) => [
        200,
        runOf(BACKUP, call < 2 ? 'running' : 'succeeded'),
      ],
    });
    const result = await run(['backups', 'create', SERVICE, '--wait'], api.fetchImpl);
    expect(result).toMatchObject({ code: 0, stdout: `${BACKUP}: succeeded` });
    expect(api.requests.filter((r) => r.url.pathname === `/api/backups/${BACKUP}`)).toHaveLength(2);
  });

  it('exits 1 with the reason when a waited-for restore failed', async () => {
    const api = fakeApi({
      [`POST /api/backups/${BACKUP}/restore`]: [202, runOf(RESTORE, 'queued')],
      [`GET /api/restores/${RESTORE}`]: [
        200,
        runOf(RESTORE, 'failed', 'restic restore of snapshot 9c6d33e0 failed'),
      ],
    });
    const result = await run(['restore', BACKUP, '--wait'], api.fetchImpl);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`${RESTORE} failed: restic restore of snapshot 9c6d33e0 failed`);
  });

  it('restores into a new service with --into-new NAME and waits for the restore', async () => {
    const clone = '5c1c2a4e-1111-4222-8333-444455556666';
    const api = fakeApi({
      [`POST /api/backups/${BACKUP}/clone`]: [202, { ...runOf(RESTORE, 'queued'), service_id: clone }],
      [`GET /api/restores/${RESTORE}`]: [200, { ...runOf(RESTORE, 'succeeded'), service_id: clone }],
    });
    const result = await run(['restore', BACKUP, '--into-new', 'shop-monday', '--wait'], api.fetchImpl);
    expect(result).toMatchObject({ code: 0 });
    expect(result.stdout).toContain(`new service shop-monday: ${clone}`);
    expect(result.stdout).toContain(`${RESTORE}: succeeded`);
    const sent = api.requests.find((r) => r.url.pathname.endsWith('/clone'));
    expect(JSON.parse(sent?.body ?? '{}')).toEqual({ name: 'shop-monday' });
  });

  it('verifies a backup and exits 1 with the reason when the check failed', async () => {
    const checked = (status: string, error: string | null = null) => ({
      ...runOf(BACKUP, 'succeeded'),
      verify_status: status,
      verify_error: error,
    });
    const api = fakeApi({
      [`POST /api/backups/${BACKUP}/verify`]: [202, checked('queued')],
      [`GET /api/backups/${BACKUP}`]: (_url, call) => [
        200,
        call < 2 ? checked('running') : checked('failed', 'restic check failed (exit 1): pack 1a2b missing'),
      ],
    });
    const result = await run(['backups', 'verify', BACKUP, '--wait'], api.fetchImpl);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe(`${BACKUP}: verify failed`);
    expect(result.stderr).toContain('restic check failed (exit 1): pack 1a2b missing');
  });

  it("answers another customer's backup as not found, without waiting", async () => {
    const api = fakeApi({});
    const result = await run(['restore', BACKUP], api.fetchImpl);
    expect(result.code).toBe(1);
    expect(api.requests).toHaveLength(1);
  });
});
