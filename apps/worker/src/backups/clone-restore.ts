import type { BackupRun, WorkerCloneStore, WorkerService, WorkerServiceStore } from '@hostctl/db';
import { serviceObjects } from '../pipeline/service-objects.js';
import { PermanentStepError } from '../pipeline/step-errors.js';
import type { VolumeEngine } from './volume-engine.js';

export interface CloneRestoreDeps {
  engine: Pick<VolumeEngine, 'restoreInto' | 'ensureVolume' | 'removeVolume'>;
  clones: Pick<WorkerCloneStore, 'customerOf' | 'queueFirstDeploy'>;
  services: Pick<WorkerServiceStore, 'setStatus'>;
  /** Hands the first deployment to the deploy queue (the reconciler re-enqueues a lost one). */
  enqueueDeploy: (deploymentId: string) => Promise<void>;
  instance: string;
}

/**
 * A restore into a new service cloned from a backup (docs/backups.md#restore-into-a-new-service):
 * the service has no deployment yet, so nothing uses its volumes. Each snapshot is restored
 * straight into the volume of the new service's name (emptied first: a retried attempt may have
 * left half of it), then the first deployment is queued. The source service is never touched.
 */
export async function restoreIntoClone(
  deps: CloneRestoreDeps,
  restoreId: string,
  backup: BackupRun,
  service: WorkerService,
  log: (line: string) => Promise<void>,
): Promise<void> {
  // The repository is the customer's: a service of another customer never reads it.
  if ((await deps.clones.customerOf(service.id)) !== backup.customerId)
    throw new PermanentStepError('the backup belongs to another customer than the new service');
  if (service.status !== 'deploying')
    throw new PermanentStepError(`the new service is ${service.status}, not waiting for its data`);
  const objects = serviceObjects(service.id, deps.instance);
  for (const volume of backup.volumes) {
    const name = objects.volume(volume.name);
    await deps.engine.removeVolume(name);
    await deps.engine.ensureVolume(name, objects.labels);
    await deps.engine.restoreInto(restoreId, backup.customerId, volume.snapshot_id, name);
    await log(`volume ${volume.name}: snapshot ${volume.snapshot_id} restored into ${name} and verified`);
  }
  const deploymentId = await deps.clones.queueFirstDeploy(restoreId, service.id);
  await log(`restore succeeded; first deployment ${deploymentId} queued`);
  // The restore is recorded: a lost enqueue is the reconciler's to repair (it re-enqueues a
  // deployment queued without a job), never a reason to fail the data that is in place.
  await deps.enqueueDeploy(deploymentId).catch(() => undefined);
}

/** A failed clone: the new service is `failed` with the reason, nothing of it ever ran. */
export async function failClone(deps: CloneRestoreDeps, serviceId: string, reason: string): Promise<void> {
  await deps.services.setStatus(serviceId, 'failed', {
    type: 'deploy',
    status: 'failed',
    message: `Restore from the backup failed, nothing was deployed: ${reason}`,
  });
}
