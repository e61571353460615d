import type { Job } from 'bullmq';
import type { Plan } from '@hostctl/compose';
import type { BackedUpVolume, BackupMethod, WorkerBackupsStore } from '@hostctl/db';
import type { JobPayload } from '@hostctl/queue';
import { serviceObjects } from '../pipeline/service-objects.js';
import type { RuntimeDriver } from '../runtime/driver.js';
import { PermanentStepError, messageOf } from '../pipeline/step-errors.js';
import { storedPlan } from '../release/release-images.js';
import { backupHooksOf, withBackupHooks } from './backup-hooks.js';
import type { BackupTargets } from './backup-targets.js';
import { applyRetention, retentionOf, type RetentionDefaults } from './retention.js';
import { withServiceStopped, type PauseDeps } from './service-pause.js';
import type { VolumeEngine } from './volume-engine.js';
import { runOnService, type VolumeRunDeps } from './volume-run.js';

/** The compose label a component declares its consistency method with (docs/backups.md). */
const METHOD_LABEL = 'hostctl.backup.method';

export type BackupProcessorDeps = PauseDeps &
  VolumeRunDeps & {
    store: Pick<
      WorkerBackupsStore,
      | 'findBackup'
      | 'startBackup'
      | 'appendBackupLog'
      | 'finishBackup'
      | 'expireBackups'
      | 'retentionOverrides'
    >;
    engine: VolumeEngine;
    instance: string;
    /** The operator's target, or the customer's own bucket: chosen per run, recorded on the backup. */
    targets: BackupTargets;
    retention: RetentionDefaults;
    /** Runs the components' backup hooks in their containers (backup-hooks.ts). */
    driver: Pick<RuntimeDriver, 'execInComponent'>;
  };

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
 * One backup run (framed by `runOnService`): a restic snapshot of every named volume of the
 * service, in its customer's repository. restic never lists a snapshot it did not finish, so a run
 * started again after a worker died begins from the start.
 */
export function createBackupProcessor(deps: BackupProcessorDeps) {
  return async (job: Job<JobPayload<'backup'>>, token?: string): Promise<void> => {
    const { backupId } = job.data;
    const backup = await deps.store.findBackup(backupId);
    if (!backup) return;
    const started = Date.now();
    let method: BackupMethod = backup.method;
    let deploymentId: string | null = null;
    // Until the target is chosen (a failure before it), the operator's is recorded.
    let where: { target: string; targetLocation: string | null } = {
      target: deps.targets.operatorKind,
      targetLocation: null,
    };
    const run = {
      kind: 'backup' as const,
      id: backupId,
      serviceId: backup.serviceId,
      repositoryOf: backup.customerId,
      status: backup.status,
      appendLog: (line: string) => deps.store.appendBackupLog(backupId, line),
      start: () => deps.store.startBackup(backupId),
      // Snapshots of the volumes done before the failure stay in the repository (restic's own
      // retention removes them) but the backup is not listed as restorable.
      fail: (reason: string) =>
        deps.store.finishBackup(backupId, {
          status: 'failed',
          ...where,
          method,
          deploymentId,
          volumes: [],
          sizeBytes: null,
          durationMs: Date.now() - started,
          error: reason,
        }),
    };
    await runOnService(deps, job, token, run, async (service, log) => {
      const last = await deps.deployments.lastSucceeded(service.id);
      const plan = storedPlan(last);
      if (!last || !plan)
        throw new PermanentStepError('the service has no successful deployment: there is nothing to back up');
      deploymentId = last.id;
      if (plan.volumes.length === 0) throw new PermanentStepError('the service has no named volumes');
      method = backupMethodOf(plan);
      const hooks = backupHooksOf(plan);
      const policy = retentionOf(plan, deps.retention, await deps.store.retentionOverrides(service.id));
      const chosen = await deps.targets.forBackup(backup.customerId);
      where = { target: chosen.kind, targetLocation: chosen.location };
      const engine = chosen.target ? deps.engine.on(chosen.target) : deps.engine;
      await log(
        `backing up ${plan.volumes.join(', ')} of release ${last.id} (method ${method}${hooks.length > 0 ? `, hooks of ${hooks.map((hook) => hook.component).join(', ')}` : ''}) to the ${chosen.location ? `customer's own bucket ${chosen.location}` : `${chosen.kind} target`}`,
      );
      await engine.ensureRepository(backupId, backup.customerId);
      const objects = serviceObjects(service.id, deps.instance);
      const volumes: BackedUpVolume[] = [];
      const takeAll = async () => {
        for (const volume of plan.volumes) {
          const summary = await engine.backupVolume(backupId, {
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
      await withBackupHooks(
        deps.driver,
        { serviceId: service.id, deploymentId: last.id, status: service.status },
        hooks,
        log,
        () => (method === 'stop' ? withServiceStopped(deps, service, log, takeAll) : takeAll()),
      );
      const tookMs = Date.now() - started; // the backup's own duration, without the retention
      // Before the run is reported succeeded, so a client that sees `succeeded` sees the earlier
      // backups' final status too. The snapshots are safe whatever happens here: a retention
      // failure is logged, never fails the backup, and leaves every earlier backup as it was.
      await applyRetention(
        { engine, store: deps.store, ...where },
        { id: backupId, customerId: backup.customerId, serviceId: service.id, volumes: plan.volumes, policy },
        log,
      ).catch(async (error: unknown) => {
        const reason = messageOf(error);
        deps.logger.warn({ backupId, serviceId: service.id, err: reason }, 'backup retention failed');
        await log(`retention failed: ${reason}`);
      });
      await deps.store.finishBackup(backupId, {
        status: 'succeeded',
        ...where,
        method,
        deploymentId,
        volumes,
        sizeBytes: volumes.reduce((sum, volume) => sum + volume.bytes, 0),
        durationMs: tookMs,
        error: null,
      });
      await log('backup succeeded');
    });
  };
}
