import { isRepositoryMethod } from '@hostctl/domain';
import { parseCompose, planCapacity, type ContainerLimitPolicy, type Plan } from '@hostctl/compose';
import {
  environmentOf,
  type WorkerDeployment,
  type WorkerDeploymentStore,
  type WorkerService,
} from '@hostctl/db';
import type { DeployLog } from './deploy-log.js';
import type { ImageGuard } from './image-guard.js';
import { ensureImages } from './images.step.js';
import { PermanentStepError } from './step-errors.js';
import { publishedCompose } from './published-compose.js';
import type { ContainerRuntime } from '../adapters/runtime.js';
import { RELEASE_STEPS, ReleaseUndone } from '../release/release-engine.js';
import { ReleaseWaiting, type Continuation } from '../release/release-waiting.js';
import type { BringUpRun, RuntimeDriver } from '../runtime/driver.js';
import type { CurrentRelease } from '../release/release-engine.js';
import { ensurePinnedImages, pinnedPlan, reusablePlan, storedPlan } from '../release/release-images.js';
import { builtImageRepositories } from '../sources/build-images.js';
import { planFromRepository, type RepositorySourceDeps } from '../sources/repository-source.js';

/**
 * The steps of one deployment, in order: how the plan is arrived at (source, build, validate,
 * pull), then the runtime's bring-up of the release (RuntimeDriver.bringUp: on the single engine
 * the release engine's cutover, release/release-engine.ts; under Swarm release/swarm-release.ts). Each is idempotent, so a
 * job retried after a crash runs them again; `checkpoint` records the step on the deployment and
 * stops the run when the deployment was cancelled meanwhile.
 */
export const DEPLOY_STEPS = ['source', 'build', 'validate', 'pull', ...RELEASE_STEPS] as const;
export type DeployStep = (typeof DEPLOY_STEPS)[number];

export interface PipelineDeps {
  /** The engine that pulls and builds the plan's images (under either runtime). */
  runtime: ContainerRuntime;
  /** The runtime the release runs on (runtime/driver.ts): its bring-up, warnings, release command. */
  driver: RuntimeDriver;
  store: Pick<
    WorkerDeploymentStore,
    | 'savePlan'
    | 'recordCommit'
    | 'record'
    | 'findById'
    | 'lastSucceeded'
    | 'recordClaim'
    | 'checkBuildMinutes'
    | 'recordBuildTime'
  >;
  /** git/ai deployments (clone, analyze, build); without it they fail as unsupported. */
  sources?: RepositorySourceDeps;
  /** CONTAINER_* settings; the built-in defaults when absent (never unlimited). */
  containerLimits?: ContainerLimitPolicy;
  /** The image policy every plan image passes before the engine sees it. */
  images: ImageGuard;
}

export interface PipelineRun {
  deployment: WorkerDeployment;
  service: WorkerService;
  log: DeployLog;
  signal: AbortSignal;
  checkpoint: (step: DeployStep) => Promise<void>;
  /** Whether a failure ends the deployment (else the job is retried and resumes). */
  isFinal: (error: unknown) => boolean;
  /**
   * The release may pause in its windows; with `resumeAt`, this run resumes one: source, build,
   * validate, pull and the release command are done, the plan is the one the deployment stored.
   */
  continuation?: Continuation;
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
  // The variable groups and the service's own variables, one precedence rule (environmentOf).
  return parseCompose(service.compose, environmentOf(service), limits ? { limits } : {});
}

export async function runDeployPipeline(deps: PipelineDeps, run: PipelineRun): Promise<PipelineResult> {
  const { driver } = deps;
  const last = await deps.store.lastSucceeded(run.service.id);
  const current = await driver.serving(run.service.id, last);
  try {
    if (run.continuation?.resumeAt) {
      const plan = resumedPlan(run.deployment);
      const result = await driver.bringUp(bringUpRun(deps, run, plan, current));
      return { plan, ...result };
    }
    const prepared = await preparePlan(deps, run, last);
    await recordWarnings(deps, run, driver.warnings(prepared.runnable));
    const { release } = prepared.runnable;
    if (release)
      await driver.runReleaseCommand(
        { serviceId: run.service.id, deploymentId: run.deployment.id, log: run.log, signal: run.signal },
        current,
        { ...prepared.runnable, release },
      );
    const result = await driver.bringUp(bringUpRun(deps, run, prepared.runnable, current));
    return { plan: prepared.plan, ...result };
  } catch (error) {
    if (error instanceof ReleaseUndone || error instanceof ReleaseWaiting || !run.isFinal(error)) throw error;
    // Nothing of the new release exists yet: whatever served before still does.
    throw new ReleaseUndone(error, {
      switched: false,
      ...(current && (await driver.isServing(run.service.id, current))
        ? { keptRelease: current.deploymentId }
        : {}),
    });
  }
}

function bringUpRun(
  deps: PipelineDeps,
  run: PipelineRun,
  plan: Plan,
  previous: CurrentRelease | undefined,
): BringUpRun {
  return {
    service: run.service,
    deploymentId: run.deployment.id,
    plan,
    previous,
    log: run.log,
    signal: run.signal,
    checkpoint: run.checkpoint,
    onOrder: (updateOrder) => deps.store.record(run.deployment.id, { updateOrder }),
    isFinal: run.isFinal,
    ...(run.continuation ? { continuation: run.continuation } : {}),
  };
}

/**
 * What a resumed release runs: the plan its deployment stored at validate. Its images and
 * containers exist already; only the windows, the route and the retire are left.
 */
function resumedPlan(deployment: WorkerDeployment): Plan {
  const plan = storedPlan(deployment);
  if (!plan) throw new PermanentStepError(`deployment ${deployment.id} stored no plan to resume`);
  return plan;
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
  // What builds: a git/ai deployment whose images are not there yet.
  const sources = !reused && isRepository ? deps.sources : undefined;
  if (sources) await checkBuildMinutes(deps, service.id);
  const fromRepository = sources
    ? await planFromRepository(sources, {
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

/**
 * build_minutes_per_day once more before the clone and build (docs/quotas.md#builds): the API let
 * the request through, but the deployment may have waited in the queue while the customer's other
 * builds used the minutes up. It fails then, naming the quota; a build that started runs to its end.
 */
async function checkBuildMinutes(deps: PipelineDeps, serviceId: string): Promise<void> {
  const outcome = await deps.store.checkBuildMinutes(serviceId);
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
    // The version it runs is the target's (an older target recorded none: the values are compared).
    ...(target.sourceVariablesVersion !== null
      ? { sourceVariablesVersion: target.sourceVariablesVersion }
      : {}),
    // The plan it runs was interpolated with the target's group versions (docs/secrets.md#rollback-and-groups).
    sourceVariableGroups: target.sourceVariableGroups ?? current.sourceVariableGroups,
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
    sourceVariablesVersion: service.variablesVersion,
    // Which group versions it ran: their values are in the sealed plan, not copied here.
    sourceVariableGroups: service.groups.versions,
  };
}

function ownBuildsOf(serviceId: string, plan: Plan): string[] {
  return builtImageRepositories(
    serviceId,
    plan.containers.map((container) => container.name),
  );
}
