import { DelayedError, type Job } from 'bullmq';
import {
  createAdvisoryLocks,
  createWorkerBackupTargetsStore,
  createWorkerBackupsStore,
  createWorkerDeploymentStore,
  createWorkerServiceStore,
} from '@hostctl/db';
import { afterAll, describe, expect, it } from 'vitest';
import { serviceWithRelease } from '../testing/backup-fixtures.js';
import { createTestDb, silentLogger } from '../testing/fixtures.js';
import { TEST_DATABASE_URL } from '../testing/test-env.js';
import { createBackupProcessor, type BackupProcessorDeps } from './backup.processor.js';
import { createBackupTargets } from './backup-targets.js';

/**
 * docs/backups.md#one-run-per-repository: every service of a customer shares one restic
 * repository, and a prune's exclusive lock failed another service's backup of the same customer
 * ("repository is already locked"). Two replicas (two lock pools, as two worker processes have)
 * back up two services of one customer at the same time: the second waits in the delayed set,
 * without a worker slot, and succeeds after; another customer's backup runs meanwhile.
 */
const db = createTestDb();
const replicas = [
  createAdvisoryLocks({ url: TEST_DATABASE_URL, max: 2 }),
  createAdvisoryLocks({ url: TEST_DATABASE_URL, max: 2 }),
];
afterAll(async () => {
  await Promise.all(replicas.map((locks) => locks.close()));
  await db.$disconnect();
});

const targets = createBackupTargets('local', {
  store: createWorkerBackupTargetsStore(db),
  settings: { BACKUP_KEY: 'k'.repeat(48), BACKUP_RELAY_DIR: '' },
  policy: { allowedHosts: [] },
});

/** A job as BullMQ hands it over, recording where it asked to be delayed to. */
function jobOf(backupId: string) {
  const delays: number[] = [];
  const job = { data: { backupId }, moveToDelayed: async (at: number) => void delays.push(at) };
  return { job: job as unknown as Job<never>, delays };
}

/** An engine whose snapshots wait for `gate` (a prune or a big volume in progress). */
function engine(gate: Promise<void>, snapshots: string[]) {
  return {
    cleanUp: async () => undefined,
    ensureRepository: async () => undefined,
    backupVolume: async (_runId: string, input: { serviceId: string }) => {
      snapshots.push(input.serviceId);
      await gate;
      return { snapshotId: 'abcdef12', bytes: 3, files: 1 };
    },
    restic: async () => ({ exitCode: 0, stdout: '', stderr: '' }),
    on: () => {
      throw new Error('no customer target here');
    },
  };
}

function processorOn(replica: number, gate: Promise<void>, snapshots: string[]) {
  return createBackupProcessor({
    store: createWorkerBackupsStore(db),
    services: createWorkerServiceStore(db),
    deployments: createWorkerDeploymentStore(db),
    driver: {
      refusal: () => undefined,
      lifecycle: async () => undefined,
      execInComponent: () => Promise.reject(new Error('no hook is declared here')),
    },
    locks: replicas[replica]!,
    engine: engine(gate, snapshots) as unknown as BackupProcessorDeps['engine'],
    instance: 'test',
    targets,
    retention: { BACKUP_KEEP_LAST: 7, BACKUP_KEEP_DAILY: 14, BACKUP_KEEP_WEEKLY: 8, BACKUP_KEEP_MONTHLY: 12 },
    logger: silentLogger,
  });
}

const statusOf = async (backupId: string) =>
  (await db.backup.findUniqueOrThrow({ where: { id: backupId } })).status;

describe("one run per customer's repository", () => {
  it("delays a second backup of the customer's repository, not another customer's", async () => {
    const first = await serviceWithRelease(db);
    const sibling = await serviceWithRelease(db, { customerId: first.customerId });
    const stranger = await serviceWithRelease(db);
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const snapshots: string[] = [];

    const running = processorOn(0, gate, snapshots)(jobOf(first.backupId).job);
    await expect.poll(() => snapshots).toEqual([first.serviceId]);

    // The other replica: the sibling's backup finds the repository busy and goes to the delayed set.
    const siblingJob = jobOf(sibling.backupId);
    await expect(processorOn(1, gate, snapshots)(siblingJob.job)).rejects.toBeInstanceOf(DelayedError);
    expect(siblingJob.delays).toHaveLength(1);
    expect(await statusOf(sibling.backupId)).toBe('queued');

    // Another customer's repository is free: its backup runs while the first still holds its own.
    const strangerRun = processorOn(1, Promise.resolve(), snapshots)(jobOf(stranger.backupId).job);
    await strangerRun;
    expect(await statusOf(stranger.backupId)).toBe('succeeded');

    open();
    await running;
    expect(await statusOf(first.backupId)).toBe('succeeded');
    // Retried from the delayed set once the first is done: the repository is free again.
    await processorOn(1, Promise.resolve(), snapshots)(jobOf(sibling.backupId).job);
    expect(await statusOf(sibling.backupId)).toBe('succeeded');
    expect(snapshots).toEqual([first.serviceId, stranger.serviceId, sibling.serviceId]);
  });
});
