import { parseCompose, type ContainerLimitPolicy, type Plan } from '@hostctl/compose';
import type { WorkerDeploymentStore, WorkerService } from '@hostctl/db';
import type { ServiceRouter } from '../adapters/router.js';
import type { ContainerRuntime } from '../adapters/runtime.js';
import {
  createContainers,
  ensureNetworkAndVolumes,
  removeOtherDeployments,
  startContainers,
  verifyContainers,
} from './containers.step.js';
import type { DeployLog } from './deploy-log.js';
import type { ImageGuard } from './image-guard.js';
import { ensureImages } from './images.step.js';
import type { ReadinessOptions } from './readiness.js';
import { serviceObjects } from './service-objects.js';
import { PermanentStepError } from './step-errors.js';
import { builtImageRepositories } from '../sources/build-images.js';
import { planFromRepository, type RepositorySourceDeps } from '../sources/repository-source.js';

/**
 * The steps of one deployment, in order. Each is idempotent, so a job retried after a crash simply
 * runs them again; `checkpoint` records the step on the deployment and stops the run when the
 * deployment was cancelled meanwhile.
 */
export const DEPLOY_STEPS = [
  'source',
  'build',
  'validate',
  'pull',
  'network',
  'volumes',
  'create',
  'start',
  'verify',
  'route',
] as const;
export type DeployStep = (typeof DEPLOY_STEPS)[number];

export interface PipelineDeps {
  runtime: ContainerRuntime;
  router: ServiceRouter;
  store: Pick<WorkerDeploymentStore, 'savePlan' | 'recordCommit'>;
  /** git/ai deployments (clone, analyze, build); without it they fail as unsupported. */
  sources?: RepositorySourceDeps;
  /** Installation label value (see INSTANCE_LABEL). */
  instance: string;
  readiness: Omit<ReadinessOptions, 'signal'>;
  /** CONTAINER_* settings; the built-in defaults when absent (never unlimited). */
  containerLimits?: ContainerLimitPolicy;
  /** The image policy every plan image passes before the engine sees it. */
  images: ImageGuard;
}

export interface PipelineRun {
  deploymentId: string;
  service: WorkerService;
  log: DeployLog;
  signal: AbortSignal;
  checkpoint: (step: DeployStep) => Promise<void>;
}

export interface PipelineResult {
  plan: Plan;
  webIp?: string;
}

/** compose/template services run their compose document; git/ai ones come from their repository. */
export function planOf(service: WorkerService, limits?: ContainerLimitPolicy): Plan {
  if (service.compose.trim() === '') {
    throw new PermanentStepError(
      `deploy method ${service.deployMethod} is not supported yet: the service has no compose definition to run`,
    );
  }
  return parseCompose(service.compose, service.variables, limits ? { limits } : {});
}

export async function runDeployPipeline(deps: PipelineDeps, run: PipelineRun): Promise<PipelineResult> {
  const { runtime, router } = deps;
  const { log, signal } = run;
  const readiness = { ...deps.readiness, signal };
  const objects = serviceObjects(run.service.id, deps.instance);

  const isRepository = run.service.deployMethod === 'git' || run.service.deployMethod === 'ai';
  const fromRepository =
    isRepository && deps.sources
      ? await planFromRepository(deps.sources, { ...run, store: deps.store, images: deps.images })
      : undefined;
  await run.checkpoint('validate');
  const plan = fromRepository?.plan ?? planOf(run.service, deps.containerLimits);
  // git/ai deployments also store how the plan was arrived at (commit, analysis, generated files).
  const stored = fromRepository?.stored ?? plan;
  await deps.store.savePlan(run.deploymentId, stored);
  await log.info(
    `Compose definition valid: ${plan.containers.map((container) => container.name).join(', ')}`,
  );

  await run.checkpoint('pull');
  // Only a repository deployment builds, and only its own images may carry the reserved names.
  const ownBuilds = fromRepository
    ? builtImageRepositories(
        run.service.id,
        plan.containers.map((container) => container.name),
      )
    : [];
  const digests = await ensureImages(runtime, plan, log, signal, deps.images, ownBuilds);
  const mainImage =
    plan.containers.find((container) => container.name === plan.web?.container)?.image ??
    plan.containers[0]?.image;
  const digest = mainImage ? digests.get(mainImage) : undefined;
  if (digest) await deps.store.savePlan(run.deploymentId, stored, digest);

  await ensureNetworkAndVolumes(runtime, plan, objects, log, run.checkpoint);

  await run.checkpoint('create');
  // The previous deployment's containers go first: one service never runs two container sets.
  await removeOtherDeployments(runtime, objects, run.deploymentId, log);
  const ids = await createContainers(runtime, plan, objects, run.deploymentId, log);

  await run.checkpoint('start');
  await startContainers(runtime, plan, ids, log, readiness);

  await run.checkpoint('verify');
  const { webIp } = await verifyContainers(runtime, plan, ids, log, readiness);

  await run.checkpoint('route');
  if (plan.web && webIp) {
    const notes = await router.upsert({
      serviceId: run.service.id,
      serviceName: run.service.name,
      url: run.service.url,
      target: { host: webIp, port: plan.web.port },
    });
    await log.info(`Routing ${run.service.url} to ${plan.web.container}:${plan.web.port}`);
    for (const note of notes ?? []) await log.info(note);
  }
  return webIp ? { plan, webIp } : { plan };
}
