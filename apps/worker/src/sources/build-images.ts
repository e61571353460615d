import { pickWeb, type Plan } from '@hostctl/compose';
import { OWNER_LABEL, SERVICE_LABEL, dockerNamePrefix } from '@hostctl/domain';
import { ImageBuildError, type ImageBuilder } from '../adapters/image-builder.js';
import type { DeployLog } from '../pipeline/deploy-log.js';
import { PermanentStepError } from '../pipeline/step-errors.js';
import { contextDir } from './repo-files.js';

/**
 * Builds every `build:` container of a plan from the checkout and replaces the build with the
 * resulting tag: `hostctl/<id12>:<commit>` (or `hostctl/<id12>-<container>:<commit>` when a compose
 * file builds several), so each commit has its own image and a redeploy of a new commit never
 * reuses an old one. The build output goes into the deployment log as it arrives.
 */
const MAX_LOG_LINES = 2000;

export interface BuildContext {
  builder: ImageBuilder;
  serviceId: string;
  commit: string;
  checkout: string;
  log: DeployLog;
  signal: AbortSignal;
}

/**
 * The repositories the build step may tag for a service: the image policy lets a plan name them
 * only for this service (they are reserved for everyone else, see image.policy.ts).
 */
export function builtImageRepositories(serviceId: string, containerNames: readonly string[]): string[] {
  const id12 = dockerNamePrefix(serviceId).replace(/^hostctl-/, '');
  return [`hostctl/${id12}`, ...containerNames.map((name) => `hostctl/${id12}-${name}`)];
}

export async function buildPlanImages(ctx: BuildContext, plan: Plan): Promise<Plan> {
  const id12 = dockerNamePrefix(ctx.serviceId).replace(/^hostctl-/, '');
  const builds = plan.containers.filter((container) => container.build);
  const containers = [];
  for (const container of plan.containers) {
    const { build, ...rest } = container;
    if (!build) {
      containers.push(container);
      continue;
    }
    const tag =
      builds.length === 1
        ? `hostctl/${id12}:${ctx.commit}`
        : `hostctl/${id12}-${container.name}:${ctx.commit}`;
    await ctx.log.info(`Building ${container.name} from ${build.context} (${build.dockerfile}) as ${tag}`);
    const built = await buildOne(ctx, { context: build.context, dockerfile: build.dockerfile, tag });
    await ctx.log.info(`Built ${tag} (${built.id})`);
    // An image that declares a port serves there when the definition names none (Dockerfile deploys).
    const ports = rest.ports.length > 0 ? rest.ports : built.exposedPorts.slice(0, 1);
    containers.push({ ...rest, image: tag, ports });
  }
  const web = pickWeb(containers);
  return { ...plan, containers, ...(web ? { web } : {}) };
}

async function buildOne(ctx: BuildContext, target: { context: string; dockerfile: string; tag: string }) {
  const dir = await contextDir(ctx.checkout, target.context);
  let lines = 0;
  // Log rows are written one after another: order matters and the pool must not be flooded.
  let pending = Promise.resolve();
  const onLine = (line: string) => {
    lines += 1;
    if (lines > MAX_LOG_LINES) return;
    const text = lines === MAX_LOG_LINES ? '… build output truncated' : line;
    pending = pending.then(() => ctx.log.info(text));
  };
  try {
    return await ctx.builder.build(
      {
        contextDir: dir,
        dockerfile: target.dockerfile,
        tag: target.tag,
        // Each label is a build step of its own (classic builder): only what cleanup needs.
        labels: { [OWNER_LABEL]: 'true', [SERVICE_LABEL]: ctx.serviceId },
      },
      onLine,
      ctx.signal,
    );
  } catch (error) {
    if (error instanceof ImageBuildError)
      throw new PermanentStepError(`building ${target.tag} failed: ${error.message}`, { cause: error });
    throw error;
  } finally {
    await pending;
  }
}
