import type { Job } from 'bullmq';
import {
  createWorkerBackupTargetsStore,
  createWorkerBackupsStore,
  createWorkerDeploymentStore,
  createWorkerServiceStore,
  type AdvisoryLocks,
} from '@hostctl/db';
import { afterAll, describe, expect, it } from 'vitest';
import { serviceWithRelease as serviceWithReleaseIn } from '../testing/backup-fixtures.js';
import { createTestDb, silentLogger } from '../testing/fixtures.js';
import { createBackupProcessor, type BackupProcessorDeps } from './backup.processor.js';
import { createBackupTargets } from './backup-targets.js';
import type { BackupTarget } from './repository.js';
import { createRestoreProcessor } from './restore.processor.js';

/**
 * The processors' half of a customer's own target (docs/backups.md#a-customers-own-target), on the
 * real database with a fake engine (the engine half is customer-target.e2e.test.ts): which engine
 * a run uses, what the backup row records, and the restore refused once the target changed.
 */
const db = createTestDb();
afterAll(async () => db.$disconnect());

const freeLocks: AdvisoryLocks = {
  tryAcquire: async () => ({ isHeld: true, release: async () => undefined }),
  acquire: async () => ({ isHeld: true, release: async () => undefined }),
  close: async () => undefined,
};
const job = (data: object) => ({ data }) as Job<never>;
const targets = createBackupTargets('local', {
  store: createWorkerBackupTargetsStore(db),
  settings: { BACKUP_KEY: 'k'.repeat(48), BACKUP_RELAY_DIR: '' },
  policy: { allowedHosts: [] },
});

/** Records which target each snapshot went to: `operator` (the engine itself) or the chosen one's kind. */
function fakeEngine(used: string[]) {
  const on = (name: string) => ({
    cleanUp: async () => undefined,
    ensureRepository: async () => undefined,
    backupVolume: async () => {
      used.push(name);
      return { snapshotId: 'abcdef12', bytes: 3, files: 1 };
    },
    // Retention fails (logged, never fails the backup): not what this test is about.
    restic: async () => ({ exitCode: 1, stdout: '', stderr: 'not here' }),
  });
  return { ...on('operator'), on: (target: BackupTarget) => on(target.kind) };
}

const serviceWithRelease = (ownBucket: string | null) => serviceWithReleaseIn(db, { ownBucket });

async function backUp(backupId: string, used: string[]) {
  const process = createBackupProcessor({
    store: createWorkerBackupsStore(db),
    services: createWorkerServiceStore(db),
    deployments: createWorkerDeploymentStore(db),
    driver: {
      refusal: () => undefined,
      lifecycle: async () => undefined,
      // These plans declare no backup hooks.
      execInComponent: () => Promise.reject(new Error('no hook is declared here')),
    },
    locks: freeLocks,
    engine: fakeEngine(used) as unknown as BackupProcessorDeps['engine'],
    instance: 'test',
    targets,
    retention: { BACKUP_KEEP_LAST: 7, BACKUP_KEEP_DAILY: 14, BACKUP_KEEP_WEEKLY: 8, BACKUP_KEEP_MONTHLY: 12 },
    logger: silentLogger,
  });
  await process(job({ backupId }));
  return db.backup.findUniqueOrThrow({ where: { id: backupId } });
}

describe('the target of a backup run', () => {
  it("goes to the customer's own bucket and records it on the backup", async () => {
    const { backupId } = await serviceWithRelease('acme-backups');
    const used: string[] = [];
    const backup = await backUp(backupId, used);
    expect(backup).toMatchObject({
      status: 'succeeded',
      target: 'customer',
      targetLocation: 'https://s3.example.com:443/acme-backups/hostctl',
    });
    expect(used).toEqual(['customer']);
    expect(backup.log).toContain("customer's own bucket https://s3.example.com:443/acme-backups/hostctl");
    expect(backup.log).not.toContain('choice-secret');
  });

  it("goes to the operator's default for a customer without one", async () => {
    const { backupId } = await serviceWithRelease(null);
    const used: string[] = [];
    expect(await backUp(backupId, used)).toMatchObject({
      status: 'succeeded',
      target: 'local',
      targetLocation: null,
    });
    expect(used).toEqual(['operator']);
  });

  it('fails the restore, saying so, once the customer pointed its target elsewhere', async () => {
    const { backupId, serviceId, customerId } = await serviceWithRelease('acme-backups');
    await backUp(backupId, []);
    await db.customerBackupTarget.update({ where: { customerId }, data: { bucket: 'acme-elsewhere' } });
    const restore = await db.backupRestore.create({ data: { backupId, serviceId, customerId } });
    const used: string[] = [];
    const process = createRestoreProcessor({
      store: createWorkerBackupsStore(db),
      services: createWorkerServiceStore(db),
      driver: { refusal: () => undefined, lifecycle: async () => undefined },
      locks: freeLocks,
      engine: fakeEngine(used) as never,
      clones: {} as never,
      enqueueDeploy: async () => undefined,
      deployments: createWorkerDeploymentStore(db),
      instance: 'test',
      targets,
      logger: silentLogger,
    });
    await process(job({ restoreId: restore.id }));
    const failed = await db.backupRestore.findUniqueOrThrow({ where: { id: restore.id } });
    expect(failed.status).toBe('failed');
    expect(failed.error).toBe(
      "the backup is in the customer's own bucket https://s3.example.com:443/acme-backups/hostctl, but the customer's backup target changed since to https://s3.example.com:443/acme-elsewhere/hostctl: set it back to restore",
    );
    expect(used).toEqual([]);
  });
});
