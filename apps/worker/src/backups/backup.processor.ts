import type { Job } from 'bullmq';
import type { Plan } from '@hostctl/compose';
import type {
  AdvisoryLocks,
  BackedUpVolume,
  BackupMethod,
  WorkerBackupsStore,
  WorkerServiceStore,
} from '@hostctl/db';
import type { JobPayload } from '@hostctl/queue';
import type { Logger } from 'pino';
import { serviceObjects } from '../pipeline/service-objects.js';
import { PermanentStepError, createRedactor, messageOf } from '../pipeline/step-errors.js';
import { lockOrDelay } from '../processors/service-lock.js';
import { storedPlan } from '../release/release-images.js';
import { withServiceStopped, type PauseDeps } from './service-pause.js';
import type { VolumeEngine } from './volume-engine.js';

/** The compose label a component declares its consistency method with (docs/backups.md). */
const METHOD_LABEL = 'hostctl.backup.method';

export interface BackupProcessorDeps extends PauseDeps {
  store: Pick<WorkerBackupsStore, 'findBackup' | 'startBackup' | 'appendBackupLog' | 'finishBackup'>;
  services: Pick<WorkerServiceStore, 'findById' | 'setStatus'>;
  locks: AdvisoryLocks;
  engine: VolumeEngine;
  instance: string;
  /** RUNTIME=swarm: volumes live on the nodes, not on this engine (docs/backups.md, open). */
  isSwarm: boolean;
  logger: Logger;
}

/**
 * `stop` when any component declares it (the whole service stops briefly, in dependency order, so
 * no component writes while restic reads); otherwise a live, crash-consistent copy.
 */
export function backupMethodOf(plan: Plan): BackupMethod {
  let method: BackupMethod = 'live';
  for (const container of plan.containers) {
    const declared = container.labels[METHOD_LABEL];
    if (declared === undefined || declared === 'live') continue;
    if (declared !== 'stop')
      throw new PermanentStepError(
        `services.${container.name}.labels.${METHOD_LABEL} must be stop or live, not ${JSON.stringify(declared)}`,
      );
    method = 'stop';
  }
  return method;
}

/**
 * One backup run: a restic snapshot of every named volume of the service, in its customer's
 * repository. The run holds the service's lock, so no deploy, lifecycle action or reconciler
 * repair touches the service meanwhile. Its outcome is the row: a failed run is `failed` with its
 * reason (the job itself succeeds); a worker that dies mid-run leaves the job to be run again from
 * the start, and restic never lists a snapshot it did not finish.
 */
export function createBackupProcessor(deps: BackupProcessorDeps) {
  return async (job: Job<JobPayload<'backup'>>, token?: string): Promise<void> => {
    const { backupId } = job.data;
    const backup = await deps.store.findBackup(backupId);
    if (!backup || backup.status === 'succeeded' || backup.status === 'failed') return;
    const lease = await lockOrDelay(deps.locks, backup.serviceId, job, token);
    const started = Date.now();
    let method: BackupMethod = backup.method;
    let deploymentId: string | null = null;
    const volumes: BackedUpVolume[] = [];
    let redact = (text: string) => text;
    const log = (line: string) => deps.store.appendBackupLog(backupId, redact(line));
    try {
      if (backup.status === 'running') await log('a worker stopped during this run: starting it again');
      await deps.store.startBackup(backupId);
      await deps.engine.cleanUp(backupId);
      const service = await deps.services.findById(backup.serviceId);
      if (!service || service.deletedAt) throw new PermanentStepError('the service was deleted');
      redact = createRedactor(service.variables);
      if (deps.isSwarm)
        throw new PermanentStepError('backups under RUNTIME=swarm are not supported yet (docs/backups.md)');
      const last = await deps.deployments.lastSucceeded(service.id);
      const plan = storedPlan(last);
      if (!last || !plan)
        throw new PermanentStepError('the service has no successful deployment: there is nothing to back up');
      deploymentId = last.id;
      if (plan.volumes.length === 0) throw new PermanentStepError('the service has no named volumes');
      method = backupMethodOf(plan);
      await log(`backing up ${plan.volumes.join(', ')} of release ${last.id} (method ${method})`);
      await deps.engine.ensureRepository(backupId, backup.customerId);
      const objects = serviceObjects(service.id, deps.instance);
      const takeAll = async () => {
        for (const volume of plan.volumes) {
          const summary = await deps.engine.backupVolume(backupId, {
            customerId: backup.customerId,
            serviceId: service.id,
            volume,
            dockerVolume: objects.volume(volume),
          });
          volumes.push({
            name: volume,
            snapshot_id: summary.snapshotId,
            bytes: summary.bytes,
            files: summary.files,
          });
          await log(
            `volume ${volume}: snapshot ${summary.snapshotId}, ${summary.files} files, ${summary.bytes} bytes`,
          );
        }
      };
      if (method === 'stop') await withServiceStopped(deps, service, log, takeAll);
      else await takeAll();
      await deps.store.finishBackup(backupId, {
        status: 'succeeded',
        method,
        deploymentId,
        volumes,
        sizeBytes: volumes.reduce((sum, volume) => sum + volume.bytes, 0),
        durationMs: Date.now() - started,
        error: null,
      });
      await log('backup succeeded');
    } catch (error) {
      const reason = redact(messageOf(error));
      deps.logger.warn({ backupId, serviceId: backup.serviceId, err: reason }, 'backup failed');
      await log(`backup failed: ${reason}`);
      // Snapshots of the volumes done before the failure stay in the repository (restic's own
      // retention removes them) but the backup is not listed as restorable.
      await deps.store.finishBackup(backupId, {
        status: 'failed',
        method,
        deploymentId,
        volumes: [],
        sizeBytes: null,
        durationMs: Date.now() - started,
        error: reason,
      });
    } finally {
      await deps.engine.cleanUp(backupId).catch(() => undefined);
      await lease.release();
    }
  };
}
