import type { Plan } from '@hostctl/compose';
import { dockerNamePrefix } from '@hostctl/domain';
import type { ContainerRuntime } from '../adapters/runtime.js';
import type { DeployLog } from '../pipeline/deploy-log.js';

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
  const pushed = new Map<string, string>();
  const containers = [];
  for (const container of plan.containers) {
    let reference = pushed.get(container.image);
    if (!reference) {
      reference = await runtime.pushImage(
        container.image,
        { repository: repositoryFor(run, container.name), tag: run.deploymentId },
        run.signal,
      );
      pushed.set(container.image, reference);
      await run.log.info(`Pushed ${container.image} to ${run.registry} for the nodes: ${reference}`);
    }
    containers.push({ ...container, image: reference });
  }
  return { ...plan, containers };
}

/** One repository per service component: <registry>/hostctl/<service prefix>-<component>. */
function repositoryFor(run: DistributionRun, component: string): string {
  // Registry paths are lowercase alphanumerics separated by single . _ or -.
  const name = component
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return `${run.registry}/hostctl/${dockerNamePrefix(run.serviceId)}-${name || 'component'}`;
}
