import { UnrecoverableError, type Job } from 'bullmq';
import { DomainError, OWNER_LABEL, SERVICE_LABEL } from '@hostctl/domain';
import type { AdvisoryLocks, WorkerDeploymentStore, WorkerServiceStore } from '@hostctl/db';
import type { JobPayload } from '@hostctl/queue';
import type { Logger } from 'pino';
import type { ServiceRouter } from '../adapters/router.js';
import type { ContainerRuntime } from '../adapters/runtime.js';
import type { ImageRegistry } from '../adapters/image-registry.js';
import type { ServiceRuntime } from '../adapters/service-runtime.js';
import { removePushedImages } from '../release/image-distribution.js';
import { serviceObjects } from '../pipeline/service-objects.js';
import { messageOf } from '../pipeline/step-errors.js';
import { lockOrDelay } from './service-lock.js';

/**
 * Removes everything a deleted service owns (containers, route, network, volumes), found by its
 * service label. Cancelling in-flight deployments comes first, so a deploy holding the lock stops
 * at its next step instead of creating containers after we removed them. The job retries until
 * nothing is left; only then is the service marked purged.
 */
export interface DeleteProcessorDeps {
  services: Pick<WorkerServiceStore, 'findById' | 'markPurged' | 'addEvent'>;
  deployments: Pick<WorkerDeploymentStore, 'cancelInFlight' | 'allIds'>;
  locks: AdvisoryLocks;
  runtime: ContainerRuntime;
  router: ServiceRouter;
  instance: string;
  /** RUNTIME=swarm: the Swarm services go first (their tasks' containers are Swarm's to remove). */
  swarm?: Pick<ServiceRuntime, 'tearDown'>;
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
      const removed = await removeAll(deps, serviceId);
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

/** Removes by label, tolerating what is already gone; throws (to retry) while anything remains. */
export async function removeAll(
  deps: Pick<DeleteProcessorDeps, 'runtime' | 'router' | 'instance' | 'swarm'>,
  serviceId: string,
): Promise<number> {
  const { runtime, swarm } = deps;
  const { selector } = serviceObjects(serviceId, deps.instance);
  const problems: string[] = [];
  let removed = 0;
  const attempt = async (what: string, remove: () => Promise<void>) => {
    try {
      await remove();
      removed += 1;
    } catch (error) {
      problems.push(`${what}: ${messageOf(error)}`);
    }
  };
  // Throws (the job retries) until the swarm has nothing of the service left: the count below only
  // sees this engine.
  if (swarm) await swarm.tearDown(serviceId);
  for (const container of await runtime.listContainers(selector))
    await attempt(`container ${container.name}`, () => runtime.removeContainer(container.id));
  await deps.router.remove(serviceId);
  // Networks and volumes only after the containers: Docker refuses to remove them while in use.
  for (const network of await runtime.listNetworks(selector))
    await attempt(`network ${network.name}`, () => runtime.removeNetwork(network.id));
  for (const volume of await runtime.listVolumes(selector))
    await attempt(`volume ${volume.name}`, () => runtime.removeVolume(volume.name));
  // Built images carry only the owner and service labels; service ids are unique across installations.
  for (const image of await runtime.listImages({ [OWNER_LABEL]: 'true', [SERVICE_LABEL]: serviceId }))
    await attempt(`image ${image.name}`, () => runtime.removeImage(image.id));
  const left =
    (await runtime.listContainers(selector)).length +
    (await runtime.listNetworks(selector)).length +
    (await runtime.listVolumes(selector)).length;
  if (left > 0) {
    throw new DomainError(
      'runtime_error',
      `${left} object(s) of service ${serviceId} are still present${problems.length ? `: ${problems.join('; ')}` : ''}`,
    );
  }
  return removed;
}
