import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Job } from 'bullmq';
import Docker from 'dockerode';
import type { PlanContainer } from '@hostctl/compose';
import {
  createAdvisoryLocks,
  createWorkerBackupsStore,
  createWorkerDeploymentStore,
  createWorkerServiceStore,
  type AdvisoryLocks,
  type Db,
} from '@hostctl/db';
import type { JobPayload } from '@hostctl/queue';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBackupContainers } from '../adapters/backup-containers.js';
import { serviceObjects } from '../pipeline/service-objects.js';
import { createTestDb, silentLogger } from '../testing/fixtures.js';
import { TEST_DATABASE_URL } from '../testing/test-env.js';
import { volumeFixtures } from '../testing/volume-fixtures.js';
import { operatorTargets } from './backup-targets.js';
import { createLocalTarget } from './repository.js';
import { createVerifyProcessor } from './verify.processor.js';
import { createVolumeEngine } from './volume-engine.js';

/**
 * A check of a backup as a restore test (docs/backups.md#verification), with real restic in the
 * real engine, a local repository and PostgreSQL: the snapshot is restored into a scratch volume
 * and the component's verify command runs on it in a container of its image, with no network.
 * The live volume changes after the backup, so a command that passes read the restored copy, and
 * its checksum is the same before and after the check; no scratch volume is left.
 */
const IMAGE = process.env.BACKUP_IMAGE ?? 'local/hostctl-restic:2';
const COMPONENT_IMAGE = 'local/busybox:1';
const INSTANCE = `verifytest-${randomUUID().slice(0, 8)}`;
const socketPath = process.env.DOCKER_SOCKET ?? '/var/run/docker.sock';
const containers = createBackupContainers({ socketPath });
const fixtures = volumeFixtures(containers, IMAGE, 'hostctl-verifytest');
let db: Db;
let locks: AdvisoryLocks;
let repositories: string;
const customers: string[] = [];

const engine = () =>
  createVolumeEngine({
    containers,
    target: createLocalTarget({ BACKUP_LOCAL_PATH: repositories, BACKUP_KEY: 'k'.repeat(48) }),
    image: IMAGE,
  });

const verifyProcessor = () =>
  createVerifyProcessor({
    store: createWorkerBackupsStore(db),
    engine: engine(),
    locks,
    targets: operatorTargets('local'),
    deployments: createWorkerDeploymentStore(db),
    services: createWorkerServiceStore(db),
    instance: INSTANCE,
    logger: silentLogger,
  });
const jobOf = (backupId: string) => ({ data: { backupId } }) as unknown as Job<JobPayload<'verify'>>;

/** The service's volumes that exist now (live, and any scratch a check left behind). */
async function volumesOf(serviceId: string): Promise<string[]> {
  const prefix = serviceObjects(serviceId, INSTANCE).volume('data');
  const listed = await new Docker({ socketPath }).listVolumes({
    filters: JSON.stringify({ name: [prefix] }),
  });
  return (listed.Volumes ?? []).map((volume) => volume.Name).sort();
}

/**
 * A running service whose release's `app` mounts the `data` volume at /var/app and declares
 * `verify`; its live volume holds `state: ok` when backed up, then `state: changed`. Returns the
 * succeeded backup, queued for a check.
 */
async function backedUpService(verify: string[], timeoutSeconds = 30) {
  const suffix = randomUUID().slice(0, 8);
  const customer = await db.customer.create({ data: { name: `verifytest-${suffix}` } });
  customers.push(customer.id);
  await db.notificationSubscription.create({
    data: {
      customerId: customer.id,
      url: 'https://hooks.example.com/x',
      events: ['backup.verify_failed'],
      secret: 's',
    },
  });
  const service = await db.service.create({
    data: {
      name: `svc-${suffix}`,
      customerId: customer.id,
      status: 'running',
      deployMethod: 'compose',
      compose: 'services: {}',
      url: `http://svc-${suffix}.apps.localhost`,
    },
  });
  const app: PlanContainer = {
    name: 'app',
    image: COMPONENT_IMAGE,
    environment: { EXPECTED: 'ok' },
    labels: {},
    volumes: [{ volume: 'data', target: '/var/app', readOnly: false }],
    ports: [],
    dependsOn: [],
    restart: 'always',
    init: false,
    limits: { memoryBytes: 64 * 1024 * 1024, nanoCpus: 500_000_000, pids: 64 },
    backupHooks: { verify, timeoutSeconds },
  };
  const release = await db.deployment.create({
    data: {
      serviceId: service.id,
      trigger: 'create',
      status: 'succeeded',
      plan: { containers: [app], volumes: ['data'] } as never,
    },
  });
  const live = serviceObjects(service.id, INSTANCE).volume('data');
  await containers.ensureVolume(live, {});
  await fixtures.onVolume(live, 'printf ok > /data/state && mkdir /data/sub && echo x > /data/sub/y');
  const runId = randomUUID();
  const volumeEngine = engine();
  await volumeEngine.ensureRepository(runId, customer.id);
  const summary = await volumeEngine.backupVolume(runId, {
    customerId: customer.id,
    serviceId: service.id,
    volume: 'data',
    dockerVolume: live,
  });
  await fixtures.onVolume(live, 'printf changed > /data/state');
  const backup = await db.backup.create({
    data: {
      serviceId: service.id,
      customerId: customer.id,
      status: 'succeeded',
      method: 'live',
      deploymentId: release.id,
      verifyStatus: 'queued',
      volumes: [{ name: 'data', snapshot_id: summary.snapshotId, bytes: 1, files: 2 }],
    },
  });
  return { serviceId: service.id, customerId: customer.id, backupId: backup.id, live };
}

const notifications = (customerId: string) =>
  db.notificationDelivery.findMany({
    where: { event: 'backup.verify_failed', subscription: { customerId } },
  });

beforeAll(async () => {
  db = createTestDb();
  locks = createAdvisoryLocks({ url: TEST_DATABASE_URL, max: 2 });
  repositories = await mkdtemp(path.join(tmpdir(), 'hostctl-verifytest-'));
}, 60_000);

afterAll(async () => {
  for (const customerId of customers) {
    const services = await db.service.findMany({ where: { customerId }, select: { id: true } });
    for (const { id } of services)
      for (const volume of await volumesOf(id)) await containers.removeVolume(volume).catch(() => undefined);
    await db.service.deleteMany({ where: { customerId } });
    await db.customer.deleteMany({ where: { id: customerId } });
  }
  await fixtures.removeAll();
  await rm(repositories, { recursive: true, force: true });
  await locks.close();
  await db.$disconnect();
});

describe('a check of a backup as a restore test', () => {
  it("passes when the component's verify command finds the backed-up content in the restored copy", async () => {
    // The restored copy says `ok` (the live volume says `changed` by now), and the container has
    // no network interface but loopback.
    const service = await backedUpService([
      'sh',
      '-c',
      'test "$(cat /var/app/state)" = "$EXPECTED" && test -f /var/app/sub/y && test "$(ls /sys/class/net)" = lo',
    ]);
    const before = await fixtures.checksums(service.live);

    await verifyProcessor()(jobOf(service.backupId));

    const row = await db.backup.findUniqueOrThrow({ where: { id: service.backupId } });
    expect({ status: row.verifyStatus, error: row.verifyError }, row.log).toEqual({
      status: 'passed',
      error: null,
    });
    expect(row.verifiedAt).toBeInstanceOf(Date);
    expect(row.log).toContain('verify command of app passed');
    expect(await fixtures.checksums(service.live)).toBe(before);
    expect(await volumesOf(service.serviceId)).toEqual([service.live]);
    expect(await notifications(service.customerId)).toEqual([]);
  }, 240_000);

  it('fails with the reason and notifies backup.verify_failed when the verify command exits 1', async () => {
    const service = await backedUpService(['sh', '-c', 'echo "state is $(cat /var/app/state)" >&2; exit 1']);
    const before = await fixtures.checksums(service.live);

    await verifyProcessor()(jobOf(service.backupId));

    const row = await db.backup.findUniqueOrThrow({ where: { id: service.backupId } });
    expect(row.verifyStatus).toBe('failed');
    expect(row.verifyError).toBe('verify command of app failed (exit 1): state is ok');
    expect(row.status).toBe('succeeded');
    const notified = await notifications(service.customerId);
    expect(notified).toHaveLength(1);
    expect(notified[0]?.body).toMatchObject({
      event: 'backup.verify_failed',
      backup: { id: service.backupId, status: 'succeeded', error: row.verifyError },
    });
    expect(await fixtures.checksums(service.live)).toBe(before);
    expect(await volumesOf(service.serviceId)).toEqual([service.live]);
  }, 240_000);

  it('fails a verify command that outlives its timeout, killing it and removing the scratch volume', async () => {
    const service = await backedUpService(['sleep', '600'], 2);

    await verifyProcessor()(jobOf(service.backupId));

    const row = await db.backup.findUniqueOrThrow({ where: { id: service.backupId } });
    expect(row.verifyStatus).toBe('failed');
    expect(row.verifyError).toBe('verify command of app did not finish within 2 s');
    expect(await notifications(service.customerId)).toHaveLength(1);
    expect(await volumesOf(service.serviceId)).toEqual([service.live]);
  }, 240_000);
});
