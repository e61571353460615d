import { isRepositoryMethod } from '@hostctl/domain';
import { parseCompose, planCapacity, type ContainerLimitPolicy, type Plan } from '@hostctl/compose';
import type { RegistryAuth } from '../adapters/registry-auth.js';
import type { RegistryAccess } from '../release/registry-access.js';
import type { WorkerDeployment, WorkerDeploymentStore, WorkerService } from '@hostctl/db';
import type { DeployLog } from './deploy-log.js';
import type { ImageGuard } from './image-guard.js';
import { ensureImages } from './images.step.js';
import { PermanentStepError } from './step-errors.js';
import { publishedCompose } from './published-compose.js';
import {
  RELEASE_STEPS,
  ReleaseUndone,
  cutover,
  type CurrentRelease,
  type ReleaseDeps,
} from '../release/release-engine.js';
import { ensurePinnedImages, pinnedPlan, reusablePlan, storedPlan } from '../release/release-images.js';
import { builtImageRepositories } from '../sources/build-images.js';
import { planFromRepository, type RepositorySourceDeps } from '../sources/repository-source.js';
import { serviceObjects } from './service-objects.js';
import type { ServiceRuntime } from '../adapters/service-runtime.js';
import type { SwarmStandby } from '../adapters/swarm-standby.js';
import { isServingOnSwarm, swarmRelease } from '../release/swarm-release.js';
import { dockerWarnings } from '../release/docker-service-runtime.js';
import { runReleaseCommand } from '../runs/release-command.js';
import { distributeImages } from '../release/image-distribution.js';

/**
 * The steps of one deployment, in order: how the plan is arrived at (source, build, validate,
 * pull), then the release engine's cutover (release/release-engine.ts). Each is idempotent, so a
 * job retried after a crash runs them again; `checkpoint` records the step on the deployment and
 * stops the run when the deployment was cancelled meanwhile.
 */
export const DEPLOY_STEPS = ['source', 'build', 'validate', 'pull', ...RELEASE_STEPS] as const;
export type DeployStep = (typeof DEPLOY_STEPS)[number];

export interface PipelineDeps extends ReleaseDeps {
  store: Pick<
    WorkerDeploymentStore,
    'savePlan' | 'recordCommit' | 'record' | 'findById' | 'lastSucceeded' | 'recordClaim'
  >;
  /** git/ai deployments (clone, analyze, build); without it they fail as unsupported. */
  sources?: RepositorySourceDeps;
  /** CONTAINER_* settings; the built-in defaults when absent (never unlimited). */
  containerLimits?: ContainerLimitPolicy;
  /** The image policy every plan image passes before the engine sees it. */
  images: ImageGuard;
  /**
   * RUNTIME=swarm: the release runs as Swarm services (release/swarm-release.ts) instead of the
   * single engine's cutover. `runtime` still pulls and builds; with `registry` set, the plan's
   * images are pushed there for the nodes (release/image-distribution.ts); `standby` holds the
   * serving release's web component during an update (adapters/swarm-standby.ts).
   */
  swarm?: {
    runtime: ServiceRuntime;
    registry?: string;
    registryAuth?: RegistryAuth;
    /** REGISTRY_PULL, when the nodes pull from another registry than `registry`. */
    pullRegistry?: string;
    access?: RegistryAccess;
    standby?: SwarmStandby;
  };
}

export interface PipelineRun {
  deployment: WorkerDeployment;
  service: WorkerService;
  log: DeployLog;
  signal: AbortSignal;
  checkpoint: (step: DeployStep) => Promise<void>;
  /** Whether a failure ends the deployment (else the job is retried and resumes). */
  isFinal: (error: unknown) => boolean;
}

export interface PipelineResult {
  /** What the release runs, as its definition names it (rollbacks: not the pinned references). */
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
  if (deps.swarm) return runOnSwarm(deps, deps.swarm, run);
  const last = await deps.store.lastSucceeded(run.service.id);
  const current = await servingRelease(deps, run.service.id, last);
  try {
    const prepared = await preparePlan(deps, run, last);
    await recordWarnings(deps, run, dockerWarnings(prepared.runnable));
    const { release } = prepared.runnable;
    if (release)
      await runReleaseCommand(
        deps,
        {
          ...run,
          serviceId: run.service.id,
          deploymentId: run.deployment.id,
          servingDeploymentId: current?.deploymentId,
        },
        { ...prepared.runnable, release },
      );
    const result = await cutover(deps, {
      service: run.service,
      deploymentId: run.deployment.id,
      plan: prepared.runnable,
      previous: current,
      log: run.log,
      signal: run.signal,
      checkpoint: run.checkpoint,
      onOrder: (updateOrder) => deps.store.record(run.deployment.id, { updateOrder }),
      isFinal: run.isFinal,
    });
    return { plan: prepared.plan, ...result };
  } catch (error) {
    if (error instanceof ReleaseUndone || !run.isFinal(error)) throw error;
    // Nothing of the new release exists yet: whatever served before still does.
    throw new ReleaseUndone(error, {
      switched: false,
      ...(current && (await isServing(deps, run.service.id, current))
        ? { keptRelease: current.deploymentId }
        : {}),
    });
  }
}

async function runOnSwarm(
  deps: PipelineDeps,
  {
    runtime: swarm,
    registry,
    registryAuth,
    pullRegistry,
    access,
    standby,
  }: NonNullable<PipelineDeps['swarm']>,
  run: PipelineRun,
): Promise<PipelineResult> {
  const last = await deps.store.lastSucceeded(run.service.id);
  const serving = last && (await swarm.observe(run.service.id)).length > 0 ? last.id : undefined;
  let hasTakenTraffic = false;
  try {
    const prepared = await preparePlan(deps, run, last);
    await recordWarnings(deps, run, swarm.warnings(prepared.runnable));
    // Refused rather than skipped: a migration that silently did not run is worse (docs/jobs.md#swarm).
    if (prepared.runnable.release)
      throw new PermanentStepError(
        'release commands do not run under RUNTIME=swarm yet (docs/jobs.md#swarm)',
      );
    const runnable = registry
      ? await distributeImages(deps.runtime, prepared.runnable, {
          registry,
          ...(registryAuth ? { auth: registryAuth } : {}),
          ...(pullRegistry ? { pullRegistry } : {}),
          ...(access ? { access } : {}),
          serviceId: run.service.id,
          deploymentId: run.deployment.id,
          log: run.log,
          signal: run.signal,
        })
      : prepared.runnable;
    await swarmRelease(
      {
        serviceRuntime: swarm,
        router: deps.router,
        settleMs: deps.stabilizationMs,
        ...(standby ? { standby } : {}),
      },
      {
        service: run.service,
        deploymentId: run.deployment.id,
        plan: runnable,
        hasPrevious: serving !== undefined,
        log: run.log,
        signal: run.signal,
        checkpoint: run.checkpoint,
        onRouted: () => {
          hasTakenTraffic = true;
        },
      },
    );
    return { plan: prepared.plan };
  } catch (error) {
    if (!run.isFinal(error)) throw error;
    // Swarm rolled a failed update back by itself (swarm-tasks.ts waits until it has); when the
    // release had taken traffic, that is a rollback after the switch.
    throw new ReleaseUndone(error, {
      switched: hasTakenTraffic,
      ...(serving && (await isServingOnSwarm(swarm, run.service.id, serving))
        ? { keptRelease: serving }
        : {}),
    });
  }
}

/** Never dropped silently: what the runtime cannot honour is a field of the deployment and a log line. */
async function recordWarnings(deps: PipelineDeps, run: PipelineRun, warnings: string[]): Promise<void> {
  await deps.store.record(run.deployment.id, { warnings });
  for (const warning of warnings) await run.log.info(`Warning: ${warning}`);
}

/**
 * source, build, validate and pull: the plan as defined, and as it runs (images pinned for a
 * rollback). `last` is the release that runs now: a push's commit must move forward from it.
 */
async function preparePlan(
  deps: PipelineDeps,
  run: PipelineRun,
  last: WorkerDeployment | null,
): Promise<{ plan: Plan; runnable: Plan }> {
  const { deployment, service, log, signal } = run;
  const isRepository = isRepositoryMethod(service.deployMethod);
  if (deployment.trigger === 'rollback') return prepareRollback(deps, run, isRepository);

  const reused = isRepository ? await reusablePlan(deps.runtime, deployment) : undefined;
  if (reused) await log.info(`Resuming: the images built for ${deployment.commit} exist; no clone or build`);
  const fromRepository =
    !reused && isRepository && deps.sources
      ? await planFromRepository(deps.sources, {
          ...run,
          deploymentId: deployment.id,
          requestedCommit: deployment.requestedCommit,
          runningCommit: last?.commit ?? null,
          store: deps.store,
          images: deps.images,
        })
      : undefined;
  await run.checkpoint('validate');
  const plan = reused ?? fromRepository?.plan ?? planOf(service, deps.containerLimits);
  await claimContainers(deps, service.id, plan);
  // git/ai deployments also store how the plan was arrived at (commit, analysis, generated files).
  const stored = fromRepository?.stored ?? (reused ? deployment.plan : plan);
  await deps.store.savePlan(deployment.id, stored);
  await deps.store.record(deployment.id, sourceRecord(service, plan, isRepository));
  await log.info(
    `Compose definition valid: ${plan.containers.map((container) => container.name).join(', ')}`,
  );

  await run.checkpoint('pull');
  // Only a repository deployment builds, and only its own images may carry the reserved names.
  const ownBuilds = isRepository ? ownBuildsOf(service.id, plan) : [];
  const digests = await ensureImages(deps.runtime, plan, log, signal, deps.images, ownBuilds);
  const imageDigests = Object.fromEntries(
    plan.containers.map((container) => [container.name, digests.get(container.image) ?? container.image]),
  );
  await deps.store.record(deployment.id, { imageDigests });
  const main =
    plan.containers.find((container) => container.name === plan.web?.container) ?? plan.containers[0];
  const digest = main ? imageDigests[main.name] : undefined;
  if (digest) await deps.store.savePlan(deployment.id, stored, digest);
  return { plan, runnable: plan };
}

/**
 * The customer's quotas (containers, memory, CPU; docs/quotas.md) before anything is pulled: the
 * API counts the definitions it can parse; a git/ai plan, a reused one and a rollback's older one
 * are first known here. Only growth is refused: the same plan deploys again under a lowered quota.
 */
async function claimContainers(deps: PipelineDeps, serviceId: string, plan: Plan): Promise<void> {
  const outcome = await deps.store.recordClaim(serviceId, planCapacity(plan.containers));
  if (!outcome.fits) throw new PermanentStepError(outcome.message);
}

/** A rollback runs exactly what its target ran: its stored plan, every image pinned; no source, no build. */
async function prepareRollback(
  deps: PipelineDeps,
  run: PipelineRun,
  isRepository: boolean,
): Promise<{ plan: Plan; runnable: Plan }> {
  const { deployment, service, log } = run;
  const target = deployment.rollbackOf ? await deps.store.findById(deployment.rollbackOf) : null;
  if (!target || target.serviceId !== service.id || target.status !== 'succeeded')
    throw new PermanentStepError(
      `the release to roll back to (${deployment.rollbackOf ?? 'none'}) is not a succeeded deployment of this service`,
    );
  await log.info(`Rolling back to release ${target.id}${target.commit ? ` (commit ${target.commit})` : ''}`);
  await run.checkpoint('validate');
  const plan = storedPlan(target);
  const runnable = pinnedPlan(target);
  if (!plan) throw new PermanentStepError(`deployment ${target.id} stored no plan`);
  await claimContainers(deps, service.id, plan);
  await deps.store.savePlan(deployment.id, target.plan);
  // What the target ran, not the service's current definition: the processor gives it back to the
  // service only when this rollback succeeds, so a failed or cancelled one changes nothing.
  const current = sourceRecord(service, plan, isRepository);
  await deps.store.record(deployment.id, {
    sourceCompose: target.sourceCompose ?? current.sourceCompose,
    sourceVariables: target.sourceVariables ?? current.sourceVariables,
    // An older release recorded no marks: its variables were all plain then, but keep the
    // service's current marks so a name secret today stays hidden.
    sourceSecretNames: target.sourceSecretNames ?? current.sourceSecretNames,
  });
  if (target.commit) await deps.store.recordCommit(deployment.id, target.commit);
  await run.checkpoint('pull');
  const pinned = await ensurePinnedImages(deps.runtime, plan, runnable, {
    log,
    signal: run.signal,
    guard: deps.images,
    ownBuilds: isRepository ? ownBuildsOf(service.id, plan) : [],
    target: target.id,
  });
  const imageDigests = Object.fromEntries(pinned);
  await deps.store.record(deployment.id, { imageDigests });
  const main = plan.web?.container ?? plan.containers[0]?.name;
  const digest = main ? imageDigests[main] : undefined;
  if (digest) await deps.store.savePlan(deployment.id, target.plan, digest);
  return { plan, runnable };
}

/**
 * What the deployment ran, so a rollback can give the service its definition back: the compose
 * and variables of the service (for git/ai, the rendered plan, which is what they publish).
 */
function sourceRecord(service: WorkerService, plan: Plan, isRepository: boolean) {
  return {
    sourceCompose: isRepository ? publishedCompose(plan, service) : service.compose,
    sourceVariables: service.variables,
    sourceSecretNames: service.secretNames,
  };
}

function ownBuildsOf(serviceId: string, plan: Plan): string[] {
  return builtImageRepositories(
    serviceId,
    plan.containers.map((container) => container.name),
  );
}

/** The current release when its set exists on this host (else there is nothing to cut over from). */
async function servingRelease(
  deps: PipelineDeps,
  serviceId: string,
  last: WorkerDeployment | null,
): Promise<CurrentRelease | undefined> {
  if (!last) return undefined;
  const set = serviceObjects(serviceId, deps.instance).set(last.id);
  if ((await deps.runtime.listContainers(set.selector)).length === 0) return undefined;
  return { deploymentId: last.id, plan: storedPlan(last) };
}

async function isServing(deps: PipelineDeps, serviceId: string, release: CurrentRelease): Promise<boolean> {
  const set = serviceObjects(serviceId, deps.instance).set(release.deploymentId);
  const containers = await deps.runtime.listContainers(set.selector);
  return containers.length > 0 && containers.every((container) => container.state === 'running');
}
