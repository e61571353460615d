import type { Plan } from '@hostctl/compose';
import { dockerNamePrefix } from '@hostctl/domain';
import type { ImageRegistry } from '../adapters/image-registry.js';
import type { RegistryAuth } from '../adapters/registry-auth.js';
import type { ContainerRuntime } from '../adapters/runtime.js';
import type { DeployLog } from '../pipeline/deploy-log.js';
import type { RegistryAccess } from './registry-access.js';

/**
 * Under RUNTIME=swarm every node pulls the images of the tasks it runs, and the images this
 * engine has (built for git/ai services, platform images such as local/*, images pulled and
 * checked here) exist on no node. Before the Swarm specs are written, each image of the plan is
 * pushed to the platform registry (SWARM_REGISTRY) and the plan names it there by digest, so
 * every node runs the same bytes the pipeline checked, and a node that cannot pull says so
 * (image_unavailable) instead of running something else.
 */
export interface DistributionRun {
  registry: string;
  /** The registry's credentials (REGISTRY_USERNAME): the push needs them. */
  auth?: RegistryAuth;
  /** REGISTRY_PULL: where the nodes pull what was pushed (a read-only registry on the same storage). */
  pullRegistry?: string;
  /** Refuses an unprotected registry once the swarm has more than one node (registry-access.ts). */
  access?: RegistryAccess;
  serviceId: string;
  deploymentId: string;
  log: DeployLog;
  signal?: AbortSignal;
}

export async function distributeImages(
  runtime: Pick<ContainerRuntime, 'pushImage'>,
  plan: Plan,
  run: DistributionRun,
): Promise<Plan> {
  await run.access?.assertProtected();
  const pushed = new Map<string, string>();
  const containers = [];
  for (const container of plan.containers) {
    let reference = pushed.get(container.image);
    if (!reference) {
      reference = forNodes(
        run,
        await runtime.pushImage(
          container.image,
          {
            repository: repositoryFor(run, container.name),
            tag: run.deploymentId,
            ...(run.auth ? { auth: run.auth } : {}),
          },
          run.signal,
        ),
      );
      pushed.set(container.image, reference);
      await run.log.info(`Pushed ${container.image} to ${run.registry} for the nodes: ${reference}`);
    }
    containers.push({ ...container, image: reference });
  }
  return { ...plan, containers };
}

/** `<registry>/repo@digest` as the nodes name it: on REGISTRY_PULL when that is another registry. */
function forNodes(run: DistributionRun, reference: string): string {
  if (!run.pullRegistry || run.pullRegistry === run.registry) return reference;
  return `${run.pullRegistry}${reference.slice(run.registry.length)}`;
}

/** One repository per service component: <registry>/hostctl/<service prefix>-<component>. */
function repositoryFor(run: DistributionRun, component: string): string {
  // Registry paths are lowercase alphanumerics separated by single . _ or -.
  const name = component
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return `${run.registry}/${serviceRepositoryPrefix(run.serviceId)}${name || 'component'}`;
}

/** The start of every repository a service's images are pushed to (inside the registry). */
export function serviceRepositoryPrefix(serviceId: string): string {
  return `hostctl/${dockerNamePrefix(serviceId)}-`;
}

/**
 * Deletes the images the service's deployments pushed, except those of `keep` (the releases a
 * rollback may return to). Tags are deployment ids, and only this service's ids are touched: a
 * repository of another service sharing the name prefix keeps its images. The registry deletes by
 * digest, which takes every tag of that digest with it; releases of an unchanged image share one,
 * so a digest that a kept (or foreign) tag points at stays, with its old tags. Returns the tags
 * that went.
 */
export async function removePushedImages(
  registry: ImageRegistry,
  service: { id: string; deploymentIds: string[] },
  keep: ReadonlySet<string> = new Set(),
): Promise<string[]> {
  const ours = new Set(service.deploymentIds);
  const removed: string[] = [];
  for (const repository of await registry.repositories(serviceRepositoryPrefix(service.id))) {
    const digests = new Map<string, string>();
    for (const tag of await registry.tags(repository)) {
      const digest = await registry.digest(repository, tag);
      if (digest) digests.set(tag, digest);
    }
    const isRemovable = (tag: string) => ours.has(tag) && !keep.has(tag);
    const held = new Set([...digests].filter(([tag]) => !isRemovable(tag)).map(([, digest]) => digest));
    const doomed = new Set([...digests].filter(([tag, digest]) => isRemovable(tag) && !held.has(digest)));
    for (const digest of new Set([...doomed].map(([, digest]) => digest)))
      await registry.deleteManifest(repository, digest);
    for (const [tag] of doomed) removed.push(`${repository}:${tag}`);
  }
  return removed;
}
