import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiClient } from '@hostctl/testing';
import { eventually } from './client.js';
import { TEST_IMAGE } from './env.js';
import { startStack, type Stack } from './stack.js';
import { fetchFrom, runningUnitsOf } from './workloads.js';
import { volumeChecksums, volumeOf, writeVolumeFile } from './volume-files.js';

/**
 * Backups and restores through the real API, worker, Docker engine and restic (docs/backups.md):
 * what a customer does before an upgrade and after a mistake. The local target is a directory of
 * this test's own; the operator key is random, so nothing here opens anyone else's repository.
 */
let stack: Stack;
let repositories: string;
let api: ReturnType<typeof apiClient>;
let otherCustomer: ReturnType<typeof apiClient>;
let customerId: string;

type Run = { id: string; status: string; error: string | null; log: string };
type Backup = Run & {
  method: string;
  release_id: string | null;
  volumes: { name: string; snapshot_id: string; bytes: number; files: number }[];
  size_bytes: number | null;
  duration_ms: number | null;
};

async function scopedKey(name: string): Promise<{ customerId: string; key: string }> {
  const customer = await stack.cli('customers', 'create', '--name', `${name}-${Date.now()}`);
  const email = `${name}-${Date.now()}@e2e.test`;
  await stack.cli(
    'users',
    'create',
    '--email',
    email,
    '--name',
    name,
    '--role',
    'operator',
    '--customer',
    customer.id as string,
  );
  const key = await stack.cli('api-keys', 'create', '--email', email, '--name', name);
  return { customerId: customer.id as string, key: key.key as string };
}

beforeAll(async () => {
  repositories = await mkdtemp(path.join(tmpdir(), 'hostctl-backups-'));
  stack = await startStack({
    extraEnv: { BACKUP_LOCAL_PATH: repositories, BACKUP_KEY: randomBytes(32).toString('hex') },
  });
  const own = await scopedKey('backups');
  customerId = own.customerId;
  api = apiClient(stack.apiUrl, own.key);
  otherCustomer = apiClient(stack.apiUrl, (await scopedKey('intruder')).key);
  // A cold start of the API and four CLI runs on a busy 2-core machine: a ceiling, not a measurement.
}, 600_000);
afterAll(async () => {
  await stack?.stop();
  if (repositories) await rm(repositories, { recursive: true, force: true });
});

const finished = (run: Run) => run.status === 'succeeded' || run.status === 'failed';
const backupDone = async (id: string) =>
  eventually(async () => (await api.get<Backup>(`/api/backups/${id}`)).body, finished, 120_000);
type Verified = { verify_status: string | null; verify_error: string | null; verified_at: string | null };
/** Asks for a check and waits for its outcome (a check already passed is asked for again). */
async function verifyDone(id: string): Promise<Verified> {
  const asked = await api.post<Verified>(`/api/backups/${id}/verify`);
  expect(asked.status).toBe(202);
  expect(asked.body.verify_status).toBe('queued');
  return eventually(
    async () => (await api.get<Verified>(`/api/backups/${id}`)).body,
    (row) => row.verify_status === 'passed' || row.verify_status === 'failed',
    120_000,
  );
}
const restoreDone = async (id: string) =>
  eventually(async () => (await api.get<Run>(`/api/restores/${id}`)).body, finished, 120_000);

async function deploy(compose: string): Promise<{ id: string; deploymentId: string }> {
  const created = await api.post<{ id: string; deploy_job_id: string }>('/api/services', {
    name: `bk-${Date.now().toString(36)}`,
    customer_id: customerId,
    deploy_method: 'compose',
    compose,
  });
  expect(created.status).toBe(201);
  const deployment = await api.get<{ status: string }>(
    `/api/deployments/${created.body.deploy_job_id}?wait=90`,
  );
  expect(deployment.body.status).toBe('succeeded');
  return { id: created.body.id, deploymentId: created.body.deploy_job_id };
}

const servedBy = async (serviceId: string) => fetchFrom((await runningUnitsOf(serviceId))[0]);

describe('a service whose component declares the stop method', () => {
  // busybox httpd serves the volume: what the service itself sees of its data is one fetch away.
  const compose = [
    'services:',
    '  web:',
    `    image: ${TEST_IMAGE}`,
    '    ports: ["8080"]',
    '    labels:',
    '      hostctl.backup.method: stop',
    '    volumes:',
    '      - data:/www',
    'volumes:',
    '  data: {}',
    '',
  ].join('\n');
  let service: { id: string; deploymentId: string };
  let volume: string;
  let before: string;
  let backup: Backup;

  it('is backed up with a brief stop and runs again afterwards', async () => {
    service = await deploy(compose);
    volume = volumeOf(service.id, 'data');
    await writeVolumeFile(volume, 'index.html', 'version one of the data');
    await writeVolumeFile(volume, 'notes.txt', `${randomBytes(2048).toString('base64')}`);
    before = await volumeChecksums(volume);
    expect(await servedBy(service.id)).toBe('version one of the data');

    const requested = await api.post<Backup>(`/api/services/${service.id}/backups`);
    expect(requested.status).toBe(202);
    expect(requested.body.status).toBe('queued');
    backup = await backupDone(requested.body.id);
    expect(backup, backup.log).toMatchObject({
      status: 'succeeded',
      method: 'stop',
      release_id: service.deploymentId,
      error: null,
      volumes: [{ name: 'data', snapshot_id: expect.stringMatching(/^[0-9a-f]{8,}$/) }],
    });
    expect(backup.volumes[0]!.files).toBeGreaterThanOrEqual(2);
    expect(backup.size_bytes).toBeGreaterThan(0);
    expect(backup.duration_ms).toEqual(expect.any(Number));
    expect(backup.log).toContain('stopping the service');
    expect(backup.log).toContain('the service is running again');

    const detail = await api.get<{ status: string }>(`/api/services/${service.id}`);
    expect(detail.body.status).toBe('running');
    expect(await servedBy(service.id)).toBe('version one of the data');
    const listed = await api.get<{ data: Backup[]; total: number }>(`/api/services/${service.id}/backups`);
    expect(listed.body.total).toBe(1);
    expect(listed.body.data[0]).toMatchObject({ id: backup.id, status: 'succeeded' });
  });

  it('is restored to the byte after its data changed', async () => {
    await writeVolumeFile(volume, 'index.html', 'version two, a mistake');
    await writeVolumeFile(volume, 'stray.txt', 'written after the backup');
    expect(await volumeChecksums(volume)).not.toBe(before);

    const requested = await api.post<Run & { backup_id: string }>(`/api/backups/${backup.id}/restore`);
    expect(requested.status).toBe(202);
    expect(requested.body).toMatchObject({ backup_id: backup.id, status: 'queued' });
    const restore = await restoreDone(requested.body.id);
    expect(restore, restore.log).toMatchObject({ status: 'succeeded', error: null });

    expect(await volumeChecksums(volume)).toBe(before);
    const detail = await api.get<{ status: string }>(`/api/services/${service.id}`);
    expect(detail.body.status).toBe('running');
    expect(await servedBy(service.id)).toBe('version one of the data');
  });

  it("is none of another customer's business", async () => {
    const restore = await otherCustomer.post(`/api/backups/${backup.id}/restore`);
    expect(restore.status).toBe(404);
    expect((await otherCustomer.get(`/api/backups/${backup.id}`)).status).toBe(404);
    expect((await otherCustomer.get(`/api/services/${service.id}/backups`)).status).toBe(404);
    expect((await otherCustomer.post(`/api/services/${service.id}/backups`)).status).toBe(404);
    // The 404 is the same whether the backup exists or not: ids reveal nothing.
    const unknown = await otherCustomer.post(`/api/backups/00000000-0000-4000-8000-000000000000/restore`);
    expect(unknown.status).toBe(404);
    expect(Object.keys(restore.body as object).sort()).toEqual(Object.keys(unknown.body as object).sort());
  });
  it('loses nothing when a restore fails (the repository is gone)', async () => {
    await writeVolumeFile(volume, 'index.html', 'version three, kept');
    const current = await volumeChecksums(volume);
    // The operator's target lost this customer's repository (a disk, a mount gone).
    await rm(path.join(repositories, customerId), { recursive: true, force: true });

    const requested = await api.post<Run>(`/api/backups/${backup.id}/restore`);
    expect(requested.status).toBe(202);
    const restore = await restoreDone(requested.body.id);
    expect(restore.status).toBe('failed');
    expect(restore.error).toMatch(/restic restore of snapshot .* failed/);
    expect(restore.log).not.toContain('stopping the service');

    expect(await volumeChecksums(volume)).toBe(current);
    expect((await api.get<{ status: string }>(`/api/services/${service.id}`)).body.status).toBe('running');
    expect(await servedBy(service.id)).toBe('version three, kept');
  });
});

describe('a backup that cannot be taken', () => {
  it('fails with its reason, leaves the service running and cannot be restored', async () => {
    const service = await deploy(`services:\n  web:\n    image: ${TEST_IMAGE}\n    ports: ["8080"]\n`);
    const requested = await api.post<Backup>(`/api/services/${service.id}/backups`);
    expect(requested.status).toBe(202);
    const backup = await backupDone(requested.body.id);
    expect(backup).toMatchObject({
      status: 'failed',
      error: 'the service has no named volumes',
      volumes: [],
    });
    expect((await api.get<{ status: string }>(`/api/services/${service.id}`)).body.status).toBe('running');

    const restore = await api.post<{ code: string }>(`/api/backups/${backup.id}/restore`);
    expect(restore.status).toBe(409);
    expect(restore.body.code).toBe('conflict');
  });
});

describe('a service whose retention keeps one backup', () => {
  // The policy by labels: keep the newest snapshot only (the operator's defaults keep more).
  const compose = [
    'services:',
    '  web:',
    `    image: ${TEST_IMAGE}`,
    '    ports: ["8080"]',
    '    labels:',
    '      hostctl.backup.keep-last: "1"',
    '      hostctl.backup.keep-daily: "0"',
    '      hostctl.backup.keep-weekly: "0"',
    '      hostctl.backup.keep-monthly: "0"',
    '    volumes:',
    '      - data:/www',
    'volumes:',
    '  data: {}',
    '',
  ].join('\n');

  it('expires the older backup after the next one, and refuses to restore it saying why', async () => {
    const service = await deploy(compose);
    const volume = volumeOf(service.id, 'data');
    await writeVolumeFile(volume, 'index.html', 'first');
    const first = await backupDone((await api.post<Backup>(`/api/services/${service.id}/backups`)).body.id);
    expect(first.status, first.log).toBe('succeeded');
    expect(first.log).toContain('retention (keep last 1, daily 0, weekly 0, monthly 0): no backup expired');

    await writeVolumeFile(volume, 'index.html', 'second');
    const second = await backupDone((await api.post<Backup>(`/api/services/${service.id}/backups`)).body.id);
    expect(second.status, second.log).toBe('succeeded');
    expect(second.log).toContain(`: ${first.id} expired`);

    const expired = await api.get<Backup>(`/api/backups/${first.id}`);
    expect(expired.body.status).toBe('expired');
    expect(expired.body.error).toMatch(/removed by the retention policy \(keep last 1/);
    const refused = await api.post<{ code: string; detail: string }>(`/api/backups/${first.id}/restore`);
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('conflict');
    expect(refused.body.detail).toMatch(/is expired and cannot be restored: its snapshots were removed/);

    // The kept one still restores: the prune removed only what the policy let go.
    await writeVolumeFile(volume, 'index.html', 'third');
    const restore = await restoreDone((await api.post<Run>(`/api/backups/${second.id}/restore`)).body.id);
    expect(restore, restore.log).toMatchObject({ status: 'succeeded' });
    expect(await servedBy(service.id)).toBe('second');

    // Verification: the kept backup's repository checks clean; the expired one is not checked.
    const verified = await verifyDone(second.id);
    expect(verified, verified.verify_error ?? '').toMatchObject({
      verify_status: 'passed',
      verify_error: null,
    });
    expect(verified.verified_at).toEqual(expect.any(String));
    expect((await api.post(`/api/backups/${first.id}/verify`)).status).toBe(409);
    expect((await otherCustomer.post(`/api/backups/${second.id}/verify`)).status).toBe(404);

    // A pack file lost on the target (a bad disk, a bucket rule): the check says so.
    const packs = path.join(repositories, customerId, 'data');
    const files = await readdir(packs, { recursive: true, withFileTypes: true });
    const pack = files.find((entry) => entry.isFile());
    expect(pack).toBeDefined();
    await rm(path.join(pack!.parentPath, pack!.name));
    const damaged = await verifyDone(second.id);
    expect(damaged.verify_status).toBe('failed');
    expect(damaged.verify_error).toMatch(/restic check failed/);
  });
});
