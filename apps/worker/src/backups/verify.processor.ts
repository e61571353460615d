import type { Job } from 'bullmq';
import type { AdvisoryLocks, WorkerBackupsStore } from '@hostctl/db';
import type { JobPayload } from '@hostctl/queue';
import type { Logger } from 'pino';
import { PermanentStepError, messageOf } from '../pipeline/step-errors.js';
import { lockOrDelay, repositoryLockOrDelay } from '../processors/service-lock.js';
import type { BackupTargets } from './backup-targets.js';
import { restoreTest, type RestoreTestDeps } from './restore-test.js';
import { engineReason } from './restic.js';
import type { VolumeEngine } from './volume-engine.js';

/**
 * How much pack data each check reads and decrypts: restic picks that share of the packs at
 * random, so a check costs a bounded download (not the whole repository, as `--read-data` would)
 * and daily checks read nearly every pack within a couple of months. A rotted pack a check misses
 * the restore below finds if it belongs to the tested backup.
 */
const READ_DATA_SUBSET = '5%';

type VerifyProcessorDeps = Omit<RestoreTestDeps, 'engine'> & {
  store: Pick<WorkerBackupsStore, 'findBackup' | 'startVerify' | 'finishVerify' | 'appendBackupLog'>;
  engine: Pick<VolumeEngine, 'restic' | 'cleanUp' | 'on'> & RestoreTestDeps['engine'];
  locks: AdvisoryLocks;
  /** A backup is checked on the target it recorded (the customer's own bucket, or the operator's). */
  targets: Pick<BackupTargets, 'ofBackup'>;
  logger: Logger;
};

const SNAPSHOT_ID = /^[0-9a-f]{8,64}$/;

/**
 * A check of one backup, asked for on demand or by the schedule's verify_cron: a restore test
 * (docs/backups.md#verification). `restic check --read-data-subset` of the customer's repository
 * (its structure, its index, and a share of the pack data read back), `restic cat snapshot` of
 * each of the backup's snapshots, then the restore into scratch volumes and the components'
 * verify commands (restore-test.ts). Under the service's lock and the customer's repository lock,
 * so no retention prune or other run of the repository meets it. The row keeps the outcome; the
 * job itself does not fail on a failed check.
 */
export function createVerifyProcessor(deps: VerifyProcessorDeps) {
  return async (job: Job<JobPayload<'verify'>>, token?: string): Promise<void> => {
    const { backupId } = job.data;
    const backup = await deps.store.findBackup(backupId);
    if (!backup || (backup.verifyStatus !== 'queued' && backup.verifyStatus !== 'running')) return;
    const serviceLease = await lockOrDelay(deps.locks, backup.serviceId, job, token);
    const repositoryLease = await repositoryLockOrDelay(
      deps.locks,
      backup.customerId,
      serviceLease,
      job,
      token,
    );
    let engine: VerifyProcessorDeps['engine'] = deps.engine;
    const log = (line: string) => deps.store.appendBackupLog(backupId, `check: ${line}`);
    const restic = async (cmd: string[], what: string) => {
      const result = await engine.restic(backupId, backup.customerId, cmd, []);
      if (result.exitCode !== 0)
        throw new Error(
          `${what} failed (exit ${result.exitCode}): ${engineReason(result.stderr, result.stdout)}`,
        );
    };
    try {
      await deps.store.startVerify(backupId);
      await deps.engine.cleanUp(backupId);
      // Read again under the lock: a retention run may have expired it since it was asked for.
      const current = await deps.store.findBackup(backupId);
      if (!current || current.status !== 'succeeded')
        throw new PermanentStepError(
          `the backup is ${current?.status ?? 'gone'}: only a succeeded backup is checked`,
        );
      const chosen = await deps.targets.ofBackup(current);
      if (chosen.target) engine = deps.engine.on(chosen.target);
      await restic(
        ['restic', 'check', '--no-cache', `--read-data-subset=${READ_DATA_SUBSET}`],
        'restic check',
      );
      for (const volume of current.volumes) {
        if (!SNAPSHOT_ID.test(volume.snapshot_id))
          throw new Error(`volume ${volume.name}: not a snapshot id`);
        await restic(
          ['restic', 'cat', '--no-cache', 'snapshot', volume.snapshot_id],
          `snapshot of ${volume.name}`,
        );
      }
      await restoreTest({ ...deps, engine }, current, log);
      await log('passed');
      await deps.store.finishVerify(backupId, { status: 'passed', error: null });
    } catch (error) {
      const reason = messageOf(error);
      deps.logger.warn({ backupId, err: reason }, 'backup check failed');
      await log(`failed: ${reason}`).catch(() => undefined);
      await deps.store.finishVerify(backupId, { status: 'failed', error: reason });
    } finally {
      await deps.engine.cleanUp(backupId).catch(() => undefined);
      await repositoryLease.release();
      await serviceLease.release();
    }
  };
}
