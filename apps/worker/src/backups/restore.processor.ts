import type { Job } from 'bullmq';
import type { BackupRun, WorkerBackupsStore, WorkerService } from '@hostctl/db';
import type { JobPayload } from '@hostctl/queue';
import { serviceObjects } from '../pipeline/service-objects.js';
import { PermanentStepError, messageOf } from '../pipeline/step-errors.js';
import type { BackupTargets } from './backup-targets.js';
import { failClone, restoreIntoClone, type CloneRestoreDeps } from './clone-restore.js';
import { withServiceStopped, type PauseDeps } from './service-pause.js';
import type { VolumeEngine } from './volume-engine.js';
import { runOnService, type VolumeRunDeps } from './volume-run.js';

export type RestoreProcessorDeps = PauseDeps &
  VolumeRunDeps &
  Omit<CloneRestoreDeps, 'engine' | 'services'> & {
    store: Pick<
      WorkerBackupsStore,
      'findBackup' | 'findRestore' | 'startRestore' | 'appendRestoreLog' | 'markKept' | 'finishRestore'
    >;
    engine: VolumeEngine;
    instance: string;
    /** A backup is restored from the target it recorded only (the customer's bucket, or the operator's). */
    targets: Pick<BackupTargets, 'ofBackup'>;
  };

/**
 * A restore of a backup into its own service, in three phases so that a failure loses nothing:
 * 1. every snapshot is restored into a fresh scratch volume while the service keeps running (a
 *    broken snapshot or an unreachable repository fails here, with the live data untouched);
 * 2. the service is stopped (the lifecycle path) and each live volume's contents are copied aside
 *    into a `previous` volume, then replaced by the scratch volume's;
 * 3. the service starts again. Should a replacement fail, every live volume gets its previous
 *    contents back before the service starts; the `previous` volumes go only once that is done.
 */
export function createRestoreProcessor(deps: RestoreProcessorDeps) {
  return async (job: Job<JobPayload<'restore'>>, token?: string): Promise<void> => {
    const { restoreId } = job.data;
    const restore = await deps.store.findRestore(restoreId);
    if (!restore) return;
    // Into a new service cloned from the backup: the run's service is not the backup's.
    const source = await deps.store.findBackup(restore.backupId);
    const isClone = source !== null && source.serviceId !== restore.serviceId;
    const run = {
      kind: 'restore' as const,
      id: restoreId,
      serviceId: restore.serviceId,
      repositoryOf: source?.customerId ?? null,
      status: restore.status,
      appendLog: (line: string) => deps.store.appendRestoreLog(restoreId, line),
      start: () => deps.store.startRestore(restoreId),
      fail: async (reason: string) => {
        await deps.store.finishRestore(restoreId, { status: 'failed', error: reason });
        if (isClone) await failClone(deps, restore.serviceId, reason);
      },
    };
    await runOnService(deps, job, token, run, async (service, log) => {
      const backup = await deps.store.findBackup(restore.backupId);
      if (!backup || backup.status !== 'succeeded' || (!isClone && backup.serviceId !== service.id))
        throw new PermanentStepError('the backup is not a successful backup of this service');
      const chosen = await deps.targets.ofBackup(backup);
      const engine = chosen.target ? deps.engine.on(chosen.target) : deps.engine;
      if (chosen.location) await log(`reading from the customer's own bucket ${chosen.location}`);
      if (isClone) return restoreIntoClone({ ...deps, engine }, restoreId, backup, service, log);
      await restoreBackup(
        { ...deps, engine },
        { id: restoreId, kept: restore.keptVolumes },
        backup,
        service,
        log,
      );
      await deps.store.finishRestore(restoreId, { status: 'succeeded', error: null });
      await log('restore succeeded');
    });
  };
}

async function restoreBackup(
  deps: RestoreProcessorDeps,
  run: { id: string; kept: string[] },
  backup: BackupRun,
  service: WorkerService,
  log: (line: string) => Promise<void>,
): Promise<void> {
  const { engine } = deps;
  const runId = run.id;
  const objects = serviceObjects(service.id, deps.instance);
  const short = runId.replace(/-/g, '').slice(0, 8);
  const volumes = backup.volumes.map((volume) => ({
    ...volume,
    live: objects.volume(volume.name),
    scratch: `${objects.volume(volume.name)}-restore-${short}`,
    previous: `${objects.volume(volume.name)}-previous-${short}`,
  }));
  try {
    for (const volume of volumes) {
      await engine.removeVolume(volume.scratch);
      await engine.ensureVolume(volume.scratch, objects.labels);
      await engine.restoreInto(runId, backup.customerId, volume.snapshot_id, volume.scratch);
      await log(`volume ${volume.name}: snapshot ${volume.snapshot_id} restored and verified`);
    }
    await withServiceStopped(deps, service, log, async () => {
      const replaced: typeof volumes = [];
      try {
        for (const volume of volumes) {
          // Kept by an earlier attempt of this run: the live volume may be half replaced since,
          // so the kept copy is the one to trust.
          if (!run.kept.includes(volume.name)) {
            await engine.ensureVolume(volume.previous, objects.labels);
            await engine.replaceContents(runId, volume.live, volume.previous);
            await deps.store.markKept(runId, volume.name);
          }
          replaced.push(volume);
          await engine.replaceContents(runId, volume.scratch, volume.live);
          await log(`volume ${volume.name}: replaced (its previous contents kept until the end)`);
        }
      } catch (error) {
        await log(`replacing the volumes failed: ${messageOf(error)}; putting the previous contents back`);
        for (const volume of replaced) await engine.replaceContents(runId, volume.previous, volume.live);
        throw error;
      }
    });
    for (const volume of volumes) await engine.removeVolume(volume.previous);
  } finally {
    for (const volume of volumes) await engine.removeVolume(volume.scratch).catch(() => undefined);
  }
}
