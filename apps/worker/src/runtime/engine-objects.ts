import { DomainError, OWNER_LABEL, SERVICE_LABEL } from '@hostctl/domain';
import type { ServiceRouter } from '../adapters/router.js';
import type { ContainerRuntime } from '../adapters/runtime.js';
import { serviceObjects } from '../pipeline/service-objects.js';
import { messageOf } from '../pipeline/step-errors.js';

/**
 * Removes everything of a service on this engine (containers, route, networks, volumes, built
 * images), found by its service label and tolerating what is already gone; throws (to retry)
 * while anything remains. Both drivers end their tear-down with it: under Swarm this engine still
 * holds the images it built and any one-off containers.
 */
export async function removeAll(
  deps: { runtime: ContainerRuntime; router: Pick<ServiceRouter, 'remove'>; instance: string },
  serviceId: string,
): Promise<number> {
  const { runtime } = deps;
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
