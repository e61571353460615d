import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiClient } from '@hostctl/testing';
import { eventually } from './client.js';
import { TEST_IMAGE } from './env.js';
import { startStack, type Stack } from './stack.js';
import { runningUnitsOf } from './workloads.js';
import { readVolumeFile, volumeOf, writeVolumeFile } from './volume-files.js';

/**
 * Backup hooks (docs/backups.md#hooks) through the real API, worker, Docker engine and restic:
 * what a database's dump before the copy does for a customer. The pre hook writes a file into the
 * volume inside the running container, the post hook removes it: the file is then in the snapshot
 * and nowhere else, so a restore that brings it back proves the hook ran before the copy and the
 * copy saw what it wrote. A failing pre hook fails the backup loudly with the hook's own output.
 */
let stack: Stack;
let repositories: string;
let api: ReturnType<typeof apiClient>;
let customerId: string;

type Run = { id: string; status: string; error: string | null; log: string };
type Backup = Run & { method: string; volumes: { name: string }[]; size_bytes: number | null };

beforeAll(async () => {
  repositories = await mkdtemp(path.join(tmpdir(), 'hostctl-backup-hooks-'));
  stack = await startStack({
    extraEnv: { BACKUP_LOCAL_PATH: repositories, BACKUP_KEY: randomBytes(32).toString('hex') },
  });
  const customer = await stack.cli('customers', 'create', '--name', `hooks-${Date.now()}`);
  customerId = customer.id as string;
  const email = `hooks-${Date.now()}@e2e.test`;
  await stack.cli(
    'users',
    'create',
    '--email',
    email,
    '--name',
    'hooks',
    '--role',
    'operator',
    '--customer',
    customerId,
  );
  api = apiClient(
    stack.apiUrl,
    (await stack.cli('api-keys', 'create', '--email', email, '--name', 'hooks')).key as string,
  );
}, 600_000);
afterAll(async () => {
  await stack?.stop();
  if (repositories) await rm(repositories, { recursive: true, force: true });
});

const finished = (run: Run) => run.status === 'succeeded' || run.status === 'failed';
const backupDone = async (id: string) =>
  eventually(async () => (await api.get<Backup>(`/api/backups/${id}`)).body, finished, 120_000);
const restoreDone = async (id: string) =>
  eventually(async () => (await api.get<Run>(`/api/restores/${id}`)).body, finished, 120_000);

/** A web component serving its volume at /www, with these hooks and a variable that is a secret. */
function composeWith(hooks: string[]): string {
  return [
    'services:',
    '  web:',
    `    image: ${TEST_IMAGE}`,
    '    ports: ["8080"]',
    '    environment:',
    '      DUMP_TOKEN: ${DUMP_TOKEN}',
    '    volumes:',
    '      - data:/www',
    '    x-hostctl:',
    '      backup:',
    ...hooks.map((line) => `        ${line}`),
    'volumes:',
    '  data: {}',
    '',
  ].join('\n');
}

const TOKEN = `tok-${randomBytes(12).toString('hex')}`;

async function deploy(compose: string): Promise<{ id: string; deploymentId: string }> {
  const created = await api.post<{ id: string; deploy_job_id: string }>('/api/services', {
    name: `hk-${Date.now().toString(36)}`,
    customer_id: customerId,
    deploy_method: 'compose',
    compose,
    variables: { DUMP_TOKEN: TOKEN },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const deployment = await api.get<{ status: string }>(
    `/api/deployments/${created.body.deploy_job_id}?wait=90`,
  );
  expect(deployment.body.status).toBe('succeeded');
  return { id: created.body.id, deploymentId: created.body.deploy_job_id };
}

async function backUp(serviceId: string): Promise<Backup> {
  const requested = await api.post<Backup>(`/api/services/${serviceId}/backups`);
  expect(requested.status).toBe(202);
  return backupDone(requested.body.id);
}

const runningContainers = async (serviceId: string) =>
  (await runningUnitsOf(serviceId)).map((unit) => unit.id);

describe('a pre hook that writes into the volume', () => {
  const compose = composeWith([
    // What a dump does: write a file of the moment into the volume, inside the running container.
    'pre: [sh, -c, "echo dumping with $$DUMP_TOKEN; printf \'dumped by the pre hook\' > /www/hook-marker.txt"]',
    'post: [rm, -f, /www/hook-marker.txt]',
    'timeout_seconds: 30',
  ]);
  let service: { id: string; deploymentId: string };
  let volume: string;
  let backup: Backup;

  it('runs before the copy, so the snapshot holds what it wrote; the post hook removes it after', async () => {
    service = await deploy(compose);
    volume = volumeOf(service.id, 'data');
    await writeVolumeFile(volume, 'index.html', 'the data');
    const containers = await runningContainers(service.id);

    backup = await backUp(service.id);
    expect(backup, backup.log).toMatchObject({ status: 'succeeded', method: 'live', error: null });
    expect(backup.volumes.map((item) => item.name)).toEqual(['data']);
    expect(backup.log).toContain('pre hook of web: exit 0');
    expect(backup.log).toContain('post hook of web: exit 0');
    expect(backup.log.indexOf('pre hook of web: exit 0')).toBeLessThan(
      backup.log.indexOf('volume data: snapshot'),
    );
    expect(backup.log.indexOf('volume data: snapshot')).toBeLessThan(
      backup.log.indexOf('post hook of web: exit 0'),
    );
    // The hook's output is in the log with the service's variable values masked.
    expect(backup.log).toContain('dumping with ***');
    expect(backup.log).not.toContain(TOKEN);

    // The post hook ran: the marker is gone from the live volume; the service never stopped.
    expect(await readVolumeFile(volume, 'hook-marker.txt')).toBe('missing');
    expect(await runningContainers(service.id)).toEqual(containers);
  });

  it('is brought back by a restore: the marker came from the snapshot', async () => {
    await writeVolumeFile(volume, 'index.html', 'changed after the backup');
    const requested = await api.post<Run>(`/api/backups/${backup.id}/restore`);
    expect(requested.status).toBe(202);
    const restore = await restoreDone(requested.body.id);
    expect(restore, restore.log).toMatchObject({ status: 'succeeded', error: null });
    expect(await readVolumeFile(volume, 'hook-marker.txt')).toBe('dumped by the pre hook');
    expect(await readVolumeFile(volume, 'index.html')).toBe('the data');
  });
});

describe('a pre hook that fails', () => {
  it('fails the backup with its output, copies nothing, runs the post hook, and leaves the container running', async () => {
    const service = await deploy(
      composeWith([
        'pre: [sh, -c, "echo cannot dump: $$DUMP_TOKEN is refused >&2; exit 3"]',
        'post: [sh, -c, "printf ran > /www/post-ran.txt"]',
      ]),
    );
    const volume = volumeOf(service.id, 'data');
    const containers = await runningContainers(service.id);

    const backup = await backUp(service.id);
    expect(backup.status, backup.log).toBe('failed');
    expect(backup.error).toBe(
      'pre hook of web failed (exit 3), nothing was copied: cannot dump: *** is refused',
    );
    expect(backup.volumes).toEqual([]);
    expect(backup.size_bytes).toBeNull();
    expect(backup.log).not.toContain('volume data: snapshot');
    expect(backup.log).not.toContain(TOKEN);
    expect(backup.log).toContain('post hook of web: exit 0');
    expect(await readVolumeFile(volume, 'post-ran.txt')).toBe('ran');

    expect(await runningContainers(service.id)).toEqual(containers);
    expect((await api.get<{ status: string }>(`/api/services/${service.id}`)).body.status).toBe('running');
    const restore = await api.post<{ code: string }>(`/api/backups/${backup.id}/restore`);
    expect(restore.status).toBe(409);
  });

  it('fails the backup when it outlives its timeout, and when its program does not exist', async () => {
    const slow = await deploy(composeWith(['pre: [sleep, "30"]', 'timeout_seconds: 1']));
    const timedOut = await backUp(slow.id);
    expect(timedOut.status, timedOut.log).toBe('failed');
    expect(timedOut.error).toMatch(/^pre hook of web timed out after 1s .*nothing was copied/);
    expect(timedOut.volumes).toEqual([]);

    const missing = await deploy(composeWith(['pre: [/no/such/dumper]']));
    const notFound = await backUp(missing.id);
    expect(notFound.status, notFound.log).toBe('failed');
    expect(notFound.error).toMatch(/^pre hook of web failed \(exit 12[67]\), nothing was copied/);
    expect((await api.get<{ status: string }>(`/api/services/${missing.id}`)).body.status).toBe('running');
  });
});

describe('a bad hook declaration', () => {
  it.each([
    ['an empty argv', ['pre: []'], 'services.web.x-hostctl.backup.pre'],
    [
      'a too long argv',
      [`pre: [${Array.from({ length: 300 }, () => 'x').join(', ')}]`],
      'services.web.x-hostctl.backup.pre',
    ],
    [
      'a zero timeout',
      ['pre: [sync]', 'timeout_seconds: 0'],
      'services.web.x-hostctl.backup.timeout_seconds',
    ],
    [
      'a timeout over an hour',
      ['post: [sync]', 'timeout_seconds: 86400'],
      'services.web.x-hostctl.backup.timeout_seconds',
    ],
  ])('is refused before anything is stored: %s', async (_label, hooks, field) => {
    const name = `hk-bad-${randomBytes(3).toString('hex')}`;
    const refused = await api.post<{
      status: number;
      code: string;
      detail: string;
      errors: { path: string }[];
    }>('/api/services', {
      name,
      customer_id: customerId,
      deploy_method: 'compose',
      compose: composeWith(hooks),
      variables: { DUMP_TOKEN: TOKEN },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.detail).toContain(field);
    expect(refused.body.errors.map((error) => error.path)).toEqual([
      `/body/compose/${field.replaceAll('.', '/')}`,
    ]);
    const listed = await api.get<{ data: { name: string }[] }>(`/api/services?customer_id=${customerId}`);
    expect(listed.body.data.map((item) => item.name)).not.toContain(name);
  });
});
