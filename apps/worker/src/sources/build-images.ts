import { pickWeb, type Plan } from '@hostctl/compose';
import { OWNER_LABEL, SERVICE_LABEL, dockerNamePrefix } from '@hostctl/domain';
import { ImageBuildError, type ImageBuilder } from '../adapters/image-builder.js';
import type { DeployLog } from '../pipeline/deploy-log.js';
import { assertImageAllowed, type ImageGuard } from '../pipeline/image-guard.js';
import { PermanentStepError } from '../pipeline/step-errors.js';
import { checkDockerfile } from './dockerfile-policy.js';
import { RepositoryContentError, contextDir, readRepoFile } from './repo-files.js';

/**
 * Builds every `build:` container of a plan from the checkout and replaces the build with the
 * resulting tag: `hostctl/<id12>:<commit>` (or `hostctl/<id12>-<container>:<commit>` when a compose
 * file builds several), so each commit has its own image and a redeploy of a new commit never
 * reuses an old one. The build output goes into the deployment log as it arrives.
 */
const MAX_LOG_LINES = 2000;
const MAX_DOCKERFILE_BYTES = 256 * 1024;

export interface BuildContext {
  builder: ImageBuilder;
  serviceId: string;
  commit: string;
  checkout: string;
  log: DeployLog;
  signal: AbortSignal;
  /** The image policy the Dockerfile's FROM and COPY --from images pass before the build. */
  images: ImageGuard;
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
  await checkBaseImages(ctx, dir, target.dockerfile);
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

/** The engine pulls what FROM names while building: the same policy as a plan's images, first. */
async function checkBaseImages(ctx: BuildContext, dir: string, dockerfile: string): Promise<void> {
  const text = await readRepoFile(dir, dockerfile, MAX_DOCKERFILE_BYTES).catch((error: unknown) => {
    if (error instanceof RepositoryContentError)
      throw new PermanentStepError(`${dockerfile}: ${error.message}`, { cause: error });
    throw error;
  });
  // The one Dockerfile reading the builder also applies (remote ADD, COPY --from=<image>, …);
  // here its FROM images go through the image policy, which needs DNS and so is asynchronous.
  const found = checkDockerfile(text, { name: dockerfile });
  if (found.problems.length > 0) throw new PermanentStepError(`refused: ${found.problems.join('; ')}`);
  for (const image of found.images) {
    try {
      await assertImageAllowed(ctx.images, image);
    } catch (error) {
      throw new PermanentStepError(`${dockerfile} refused: ${(error as Error).message}`, { cause: error });
    }
  }
}
