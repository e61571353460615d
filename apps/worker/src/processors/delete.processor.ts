import { UnrecoverableError, type Job } from 'bullmq';
import type { AdvisoryLocks, WorkerDeploymentStore, WorkerServiceStore } from '@hostctl/db';
import type { JobPayload } from '@hostctl/queue';
import type { Logger } from 'pino';
import type { ImageRegistry } from '../adapters/image-registry.js';
import { removePushedImages } from '../release/image-distribution.js';
import { messageOf } from '../pipeline/step-errors.js';
import type { RuntimeDriver } from '../runtime/driver.js';
import { lockOrDelay } from './service-lock.js';

/**
 * Removes everything a deleted service owns (containers or Swarm services, route, networks,
 * volumes) through its runtime (RuntimeDriver.tearDown). Cancelling in-flight deployments comes first, so a deploy holding the lock stops
 * at its next step instead of creating containers after we removed them. The job retries until
 * nothing is left; only then is the service marked purged.
 */
export interface DeleteProcessorDeps {
  services: Pick<WorkerServiceStore, 'findById' | 'markPurged' | 'addEvent'>;
  deployments: Pick<WorkerDeploymentStore, 'cancelInFlight' | 'allIds'>;
  locks: AdvisoryLocks;
  /** The runtime: tears the service down (its route too), throwing while anything is left. */
  driver: Pick<RuntimeDriver, 'tearDown'>;
  /** RUNTIME=swarm with REGISTRY: the images pushed for the service's deployments go too. */
  registryImages?: ImageRegistry;
  logger: Logger;
  /** Drops the service's container-log stream: its output is part of the data delete removes. */
  purgeLogs(serviceId: string): Promise<void>;
}

export function createDeleteProcessor(deps: DeleteProcessorDeps) {
  return async (job: Job<JobPayload<'delete'>>, token?: string): Promise<{ removed: number }> => {
    const { serviceId } = job.data;
    const service = await deps.services.findById(serviceId);
    if (service && !service.deletedAt)
      throw new UnrecoverableError('the service is not marked as deleted; refusing to remove it');
    const cancelled = await deps.deployments.cancelInFlight(serviceId);
    if (cancelled > 0)
      deps.logger.info({ serviceId, cancelled }, 'cancelled in-flight deployments of a deleted service');
    const lease = await lockOrDelay(deps.locks, serviceId, job, token);
    try {
      const removed = await deps.driver.tearDown(serviceId);
      await deps.purgeLogs(serviceId);
      if (deps.registryImages) await removeRegistryImages(deps, deps.registryImages, serviceId);
      if (service && !service.purgedAt) {
        await deps.services.markPurged(serviceId);
        await deps.services.addEvent(serviceId, {
          type: 'delete',
          status: 'success',
          message: `Removed ${removed} container(s), network(s) and volume(s)`,
        });
      }
      deps.logger.info({ serviceId, removed }, 'service purged');
      return { removed };
    } finally {
      await lease.release();
    }
  };
}

/**
 * The service's images in the registry. A registry that cannot delete (down, deletes disabled)
 * does not hold the purge up: the failure is logged and said on the service's events.
 */
async function removeRegistryImages(deps: DeleteProcessorDeps, registry: ImageRegistry, serviceId: string) {
  try {
    const removed = await removePushedImages(registry, {
      id: serviceId,
      deploymentIds: await deps.deployments.allIds(serviceId),
    });
    if (removed.length > 0)
      deps.logger.info({ serviceId, removed: removed.length }, 'removed registry images');
  } catch (error) {
    deps.logger.warn(
      { serviceId, err: messageOf(error) },
      'could not remove the service images from the registry',
    );
    await deps.services.addEvent(serviceId, {
      type: 'delete',
      status: 'failed',
      message: `Its images could not be removed from the registry: ${messageOf(error)}`,
    });
  }
}
