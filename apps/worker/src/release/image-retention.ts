import { OWNER_LABEL, SERVICE_LABEL } from '@hostctl/domain';
import type { WorkerDeploymentStore } from '@hostctl/db';
import type { ContainerRuntime } from '../adapters/runtime.js';
import { storedPlan } from './release-images.js';

/**
 * Built images (git/ai) take space on every commit; a rollback needs the ones its target ran. The
 * images of the last `kept` succeeded releases of the service stay, older built images of the
 * service go (after a success, under the service lock). Images the service did not build (pulled
 * from a registry) are never touched: a rollback pulls them again by digest.
 */
export async function pruneBuiltImages(
  runtime: Pick<ContainerRuntime, 'listImages' | 'removeImage'>,
  deployments: Pick<WorkerDeploymentStore, 'succeededReleases'>,
  serviceId: string,
  kept: number,
): Promise<string[]> {
  const wanted = new Set<string>();
  for (const release of await deployments.succeededReleases(serviceId, kept)) {
    for (const pinned of Object.values(release.imageDigests ?? {})) wanted.add(pinned);
    for (const container of storedPlan(release)?.containers ?? []) wanted.add(container.image);
  }
  const removed: string[] = [];
  for (const image of await runtime.listImages({ [OWNER_LABEL]: 'true', [SERVICE_LABEL]: serviceId })) {
    if (wanted.has(image.id) || wanted.has(image.name)) continue;
    await runtime.removeImage(image.id);
    removed.push(image.name);
  }
  return removed;
}
