import type { Plan } from '@hostctl/compose';
import type { WorkerDeployment } from '@hostctl/db';
import type { ContainerRuntime } from '../adapters/runtime.js';
import type { DeployLog } from '../pipeline/deploy-log.js';
import { assertImageAllowed, type ImageGuard } from '../pipeline/image-guard.js';
import { namesRegistryHost } from '../pipeline/images.step.js';
import { PermanentStepError } from '../pipeline/step-errors.js';

/**
 * Images of releases: what a rollback runs (the target's plan with every image pinned to what it
 * ran) and what a retried repository deployment can reuse instead of cloning and building again.
 */
function isPlan(value: unknown): value is Plan {
  return typeof value === 'object' && value !== null && Array.isArray((value as Plan).containers);
}

/** The plan a stored deployment ran; git/ai deployments also store how it was arrived at (`source`). */
export function storedPlan(deployment: Pick<WorkerDeployment, 'plan'> | null | undefined): Plan | undefined {
  if (!deployment || !isPlan(deployment.plan)) return undefined;
  const { containers, volumes, web } = deployment.plan;
  return { containers, volumes, ...(web ? { web } : {}) };
}

/** component → the image the deployment's plan names, pinned by the digests recorded after its pull. */
export function pinnedPlan(target: WorkerDeployment): Plan {
  const plan = storedPlan(target);
  if (!plan) throw new PermanentStepError(`deployment ${target.id} stored no plan; it cannot be run again`);
  const digests = target.imageDigests;
  if (!digests)
    throw new PermanentStepError(
      `deployment ${target.id} recorded no image digests; it cannot be run again exactly as it ran`,
    );
  return {
    ...plan,
    containers: plan.containers.map((container) => {
      const pinned = digests[container.name];
      if (!pinned)
        throw new PermanentStepError(
          `deployment ${target.id} recorded no image digest for ${container.name}`,
        );
      return { ...container, image: pinned };
    }),
  };
}

/**
 * The pull step of a rollback: the target's own image names pass the image policy, then each
 * pinned reference is pulled (registry images, by digest) or must still be on this host (images
 * built here, by id: kept for RELEASES_KEPT releases).
 */
export async function ensurePinnedImages(
  runtime: Pick<ContainerRuntime, 'inspectImage' | 'pullImage'>,
  original: Plan,
  pinned: Plan,
  context: {
    log: DeployLog;
    signal: AbortSignal;
    guard: ImageGuard;
    ownBuilds: readonly string[];
    target: string;
  },
): Promise<Map<string, string>> {
  for (const container of original.containers)
    await assertImageAllowed(context.guard, container.image, context.ownBuilds);
  const digests = new Map<string, string>();
  for (const container of pinned.containers) {
    const image = container.image;
    if (!(await runtime.inspectImage(image)) && namesRegistryHost(image)) {
      await context.log.info(`Pulling ${image}`);
      await runtime.pullImage(image, () => undefined, context.signal);
    }
    const found = await runtime.inspectImage(image);
    if (!found)
      throw new PermanentStepError(
        `the image of ${container.name} from release ${context.target} (${image}) is no longer on this host; only the last RELEASES_KEPT releases' built images are kept`,
      );
    digests.set(container.name, image);
    await context.log.info(`Image of ${container.name}: ${image}`);
  }
  return digests;
}

/** A stored plan whose images all exist here: a retried repository deployment runs it without a rebuild. */
export async function reusablePlan(
  runtime: Pick<ContainerRuntime, 'inspectImage'>,
  deployment: WorkerDeployment,
): Promise<Plan | undefined> {
  const plan = storedPlan(deployment);
  if (!plan || !deployment.commit || plan.containers.some((container) => !container.image)) return undefined;
  for (const container of plan.containers)
    if (!(await runtime.inspectImage(container.image))) return undefined;
  return plan;
}
