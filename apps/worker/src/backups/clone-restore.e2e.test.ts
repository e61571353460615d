import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Job } from 'bullmq';
import {
  createAdvisoryLocks,
  createWorkerBackupsStore,
  createWorkerCloneStore,
  createWorkerDeploymentStore,
  createWorkerServiceStore,
  type AdvisoryLocks,
  type Db,
} from '@hostctl/db';
import type { JobPayload } from '@hostctl/queue';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBackupContainers } from '../adapters/backup-containers.js';
import { serviceObjects } from '../pipeline/service-objects.js';
import {
  createComposeService,
  deleteServiceRows,
  createTestDb,
  silentLogger,
  type CreatedService,
} from '../testing/fixtures.js';
import { TEST_DATABASE_URL } from '../testing/test-env.js';
import { createLocalTarget } from './repository.js';
import { createRestoreProcessor } from './restore.processor.js';
import { createVolumeEngine } from './volume-engine.js';
import { operatorTargets } from './backup-targets.js';

/**
 * A restore into a new service cloned from a backup (docs/backups.md#restore-into-a-new-service),
 * with real restic in the real engine containers, a local repository and PostgreSQL: the new
 * service's volume holds the snapshot's file, the source's volume is as it was, and the first
 * deployment is queued only after the data is in place. A broken snapshot leaves the new service
 * `failed` with the reason and nothing queued.
 */
const IMAGE = process.env.BACKUP_IMAGE ?? 'local/hostctl-restic:2';
const INSTANCE = `clonetest-${randomUUID().slice(0, 8)}`;
const containers = createBackupContainers({
  socketPath: process.env.DOCKER_SOCKET ?? '/var/run/docker.sock',
});
const volumes: string[] = [];
let db: Db;
let locks: AdvisoryLocks;
let repositories: string;
let source: CreatedService;

const engine = () =>
  createVolumeEngine({
    containers,
    target: createLocalTarget({ BACKUP_LOCAL_PATH: repositories, BACKUP_KEY: 'k'.repeat(48) }),
    image: IMAGE,
  });

async function onVolume(volume: string, script: string): Promise<string> {
  const result = await containers.run({
    name: `hostctl-clonetest-${randomUUID().slice(0, 8)}`,
    image: IMAGE,
    cmd: ['sh', '-c', script],
    env: [],
    mounts: [{ type: 'volume', source: volume, target: '/data', readOnly: false }],
    labels: {},
  });
  if (result.exitCode !== 0) throw new Error(`volume script failed: ${result.stderr}`);
  return result.stdout;
}
const listing = (volume: string) => onVolume(volume, 'cd /data && find . -type f | sort | xargs sha256sum');
const volumeOf = (serviceId: string) => {
  const name = serviceObjects(serviceId, INSTANCE).volume('data');
  volumes.push(name);
  return name;
};

/** A new service of the source's customer, waiting for its data, and its queued restore. */
async function cloneOf(backupId: string) {
  const suffix = randomUUID().slice(0, 8);
  const service = await db.service.create({
    data: {
      name: `clone-${suffix}`,
      customerId: source.customerId,
      status: 'deploying',
      deployMethod: 'compose',
      compose: 'services:\n  web:\n    image: local/busybox:1\n',
      url: `http://clone-${suffix}.apps.localhost`,
    },
  });
  const restore = await db.backupRestore.create({
    data: { backupId, serviceId: service.id, customerId: source.customerId },
  });
  return { serviceId: service.id, restoreId: restore.id };
}

function processor(queued: string[]) {
  const refuse = () => Promise.reject(new Error('a clone never stops or starts a service'));
  return createRestoreProcessor({
    store: createWorkerBackupsStore(db),
    clones: createWorkerCloneStore(db),
    services: createWorkerServiceStore(db),
    locks,
    engine: engine(),
    driver: { refusal: () => null, lifecycle: refuse } as never,
    deployments: createWorkerDeploymentStore(db),
    logger: silentLogger,
    instance: INSTANCE,
    targets: operatorTargets('local'),
    enqueueDeploy: async (id) => void queued.push(id),
  });
}
const jobOf = (restoreId: string) => ({ data: { restoreId } }) as unknown as Job<JobPayload<'restore'>>;

beforeAll(async () => {
  db = createTestDb();
  locks = createAdvisoryLocks({ url: TEST_DATABASE_URL, max: 2 });
  repositories = await mkdtemp(path.join(tmpdir(), 'hostctl-clonetest-'));
  source = await createComposeService(db, { compose: 'services:\n  web:\n    image: local/busybox:1\n' });
  await db.service.update({ where: { id: source.serviceId }, data: { status: 'running' } });
}, 60_000);

afterAll(async () => {
  for (const volume of volumes) await containers.removeVolume(volume).catch(() => undefined);
  // The source and its clones: left `running` in the shared database, a later file's reconciler
  // would find their containers missing and fail them (it did: service-restorer's sweep counts).
  await db.service.deleteMany({ where: { customerId: source.customerId } });
  await deleteServiceRows(db, [source]);
  await rm(repositories, { recursive: true, force: true });
  await locks.close();
  await db.$disconnect();
});

describe('a restore into a new service', () => {
  it("fills the new service's volume from the snapshot, leaves the source's alone, then queues the deploy", async () => {
    const live = volumeOf(source.serviceId);
    await containers.ensureVolume(live, {});
    await onVolume(
      live,
      'echo "rows of the old days" > /data/table && mkdir /data/sub && echo x > /data/sub/y',
    );
    const before = await listing(live);
    const runId = randomUUID();
    const volumeEngine = engine();
    await volumeEngine.ensureRepository(runId, source.customerId);
    const summary = await volumeEngine.backupVolume(runId, {
      customerId: source.customerId,
      serviceId: source.serviceId,
      volume: 'data',
      dockerVolume: live,
    });
    const backup = await db.backup.create({
      data: {
        serviceId: source.serviceId,
        customerId: source.customerId,
        status: 'succeeded',
        method: 'live',
        volumes: [{ name: 'data', snapshot_id: summary.snapshotId, bytes: 1, files: 2 }],
      },
    });
    // The source changes after the backup: the clone has the old data, the source keeps the new.
    await onVolume(live, 'echo "rows of today" > /data/table');
    const changed = await listing(live);

    const clone = await cloneOf(backup.id);
    const queued: string[] = [];
    await processor(queued)(jobOf(clone.restoreId));

    const restore = await db.backupRestore.findUniqueOrThrow({ where: { id: clone.restoreId } });
    expect(restore.status, restore.log).toBe('succeeded');
    expect(await listing(volumeOf(clone.serviceId))).toBe(before);
    expect(await listing(live)).toBe(changed);
    const deployments = await db.deployment.findMany({ where: { serviceId: clone.serviceId } });
    expect(deployments.map((d) => [d.trigger, d.status])).toEqual([['create', 'queued']]);
    expect(queued).toEqual([deployments[0]?.id]);
    const sourceRow = await db.service.findUniqueOrThrow({ where: { id: source.serviceId } });
    expect(sourceRow.status).toBe('running');
  }, 180_000);

  it('leaves the new service failed with the reason when the snapshot cannot be restored', async () => {
    const backup = await db.backup.create({
      data: {
        serviceId: source.serviceId,
        customerId: source.customerId,
        status: 'succeeded',
        method: 'live',
        volumes: [{ name: 'data', snapshot_id: 'deadbeef', bytes: 1, files: 1 }],
      },
    });
    const clone = await cloneOf(backup.id);
    volumeOf(clone.serviceId);
    const queued: string[] = [];
    await processor(queued)(jobOf(clone.restoreId));

    const restore = await db.backupRestore.findUniqueOrThrow({ where: { id: clone.restoreId } });
    expect(restore.status).toBe('failed');
    expect(restore.error).toContain('restic restore of snapshot deadbeef failed');
    const service = await db.service.findUniqueOrThrow({ where: { id: clone.serviceId } });
    expect(service.status).toBe('failed');
    const event = await db.serviceEvent.findFirstOrThrow({
      where: { serviceId: clone.serviceId, status: 'failed' },
    });
    expect(event.message).toContain('Restore from the backup failed, nothing was deployed');
    expect(await db.deployment.count({ where: { serviceId: clone.serviceId } })).toBe(0);
    expect(queued).toEqual([]);
  }, 180_000);
});
