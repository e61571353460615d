import { DelayedError, UnrecoverableError, type Job } from 'bullmq';
import type { Plan } from '@hostctl/compose';
import type {
  AdvisoryLocks,
  Lease,
  WorkerDeployment,
  WorkerDeploymentStore,
  WorkerService,
  WorkerServiceStore,
} from '@hostctl/db';
import { isFinalDeployment, isRepositoryMethod } from '@hostctl/domain';
import type { JobPayload } from '@hostctl/queue';
import type { Logger } from 'pino';
import { createDeployLog, type DeployLog } from '../pipeline/deploy-log.js';
import { publishedCompose } from '../pipeline/published-compose.js';
import { runDeployPipeline, type DeployStep, type PipelineDeps } from '../pipeline/deploy-pipeline.js';
import { DeploymentCancelledError, createRedactor, isPermanent, messageOf } from '../pipeline/step-errors.js';
import { RELEASE_STEPS, ReleaseUndone, type ReleaseStep } from '../release/release-engine.js';
import { ReleaseWaiting, type ResumePoint } from '../release/release-waiting.js';
import type { ImageRegistry } from '../adapters/image-registry.js';
import { removePushedImages } from '../release/image-distribution.js';
import { pruneBuiltImages } from '../release/image-retention.js';
import { recordUndone } from './deploy-outcomes.js';
import { lockOrDelay } from './service-lock.js';

/**
 * Runs one deployment: claim it, hold the service lock, run the pipeline, record the outcome.
 * At-least-once delivery is assumed: a duplicate or late job finds the deployment finished and
 * does nothing; a retried one resumes through the idempotent steps.
 */
export interface DeployProcessorDeps {
  deployments: WorkerDeploymentStore;
  services: Pick<WorkerServiceStore, 'findById'>;
  locks: AdvisoryLocks;
  pipeline: Omit<PipelineDeps, 'store'>;
  deployTimeoutMs: number;
  /**
   * DEPLOY_CUSTOMER_CONCURRENCY: deployments one customer may run at once across every worker; a
   * job past it steps aside for other customers' (docs/quotas.md#fair-queues).
   */
  customerShare: number;
  /** RELEASES_KEPT: built images of this many latest releases per service stay. */
  releasesKept: number;
  /** RUNTIME=swarm with REGISTRY: where each release's images were pushed; pruned the same way. */
  registryImages?: ImageRegistry;
  logger: Logger;
  /**
   * Wakes API followers of the deployment (pub/sub on deploymentChannel) after new log rows or a
   * status change. Fire-and-forget: followers also poll, so a lost wake-up only adds latency.
   */
  notify(deploymentId: string): void;
}

export function createDeployProcessor(deps: DeployProcessorDeps) {
  return async (job: Job<JobPayload<'deploy'>>, token?: string): Promise<{ status: string }> => {
    const first = await deps.deployments.findById(job.data.deploymentId);
    if (!first) return { status: 'unknown' };
    if (!resumePointOf(first) && isFinalDeployment(first.status)) {
      // Settled with its window still marked (by a worker of the previous release during a rolling
      // upgrade): the mark is stale, and the reconciler brings the job here to clear it.
      if (first.windowStartedAt) await deps.deployments.leaveWindow(first.id);
      return { status: first.status };
    }
    // Past its customer's share, a queued job steps aside at once: the service read and lock and
    // the claim below are what a flood would otherwise repeat per job per second.
    if (first.status === 'queued' && (await deps.deployments.isCustomerAtShare(first.id, deps.customerShare)))
      return stepAside(job, token);
    const service = await deps.services.findById(first.serviceId);
    if (!service || service.deletedAt) {
      // Its release's window ends here: the delete removes everything, the service is free.
      if (first.windowStartedAt) await deps.deployments.leaveWindow(first.id);
      return { status: 'skipped' };
    }
    const lease = await lockOrDelay(deps.locks, service.id, job, token, {
      store: deps.deployments,
      except: first.id,
    });
    try {
      // Read again under the lock: another replica may have finished it while we waited.
      const deployment = await deps.deployments.findById(first.id);
      if (!deployment) return { status: 'unknown' };
      const resumeAt = resumePointOf(deployment);
      // A release in its window continues (also cancelled: its undo is still to do); nothing
      // supersedes it and its slot is its own already.
      if (resumeAt) return await runClaimed(deps, { job, token, deployment, service, lease, resumeAt });
      if (isFinalDeployment(deployment.status)) return { status: deployment.status };
      if (await deps.deployments.hasNewer(deployment)) {
        await deps.deployments.markSuperseded(deployment);
        deps.notify(deployment.id);
        deps.logger.info({ deploymentId: deployment.id }, 'deployment superseded by a newer one');
        return { status: 'superseded' };
      }
      const claim = await deps.deployments.claim(deployment.id, deps.customerShare);
      if (claim === 'unclaimed') return { status: 'unclaimed' };
      // The service lock is released by `finally`.
      if (claim === 'customer_busy') return await stepAside(job, token);
      // Read after the claim: a request that joined this deployment while it was queued committed
      // its definition before the claim could (services.store.ts queueRedeploy locks the row).
      const current = await deps.services.findById(service.id);
      if (!current || current.deletedAt) return { status: 'skipped' };
      return await runClaimed(deps, { job, token, deployment, service: current, lease });
    } finally {
      await lease.release();
    }
  };
}

/** Where a release whose window began resumes (release/release-waiting.ts), if this one is such. */
function resumePointOf(deployment: WorkerDeployment): ResumePoint | undefined {
  const { step, windowStartedAt, status } = deployment;
  if (!windowStartedAt || (status !== 'running' && status !== 'cancelled')) return undefined;
  const index = RELEASE_STEPS.indexOf(step as ReleaseStep);
  if (index < RELEASE_STEPS.indexOf('stabilize')) return undefined;
  return { step: RELEASE_STEPS[index] as ReleaseStep, windowStartedAt: windowStartedAt.getTime() };
}

const CANCEL_POLL_MS = 1000;
/** How long a job of a customer at its share waits before it asks for a slot again. */
const CUSTOMER_BUSY_DELAY_MS = 1000;

/** Back of the line, so that other customers' deployments take this slot (docs/quotas.md#fair-queues). */
async function stepAside(job: Job, token: string | undefined): Promise<never> {
  await job.moveToDelayed(Date.now() + CUSTOMER_BUSY_DELAY_MS, token);
  throw new DelayedError();
}

interface ClaimedRun {
  job: Job;
  token: string | undefined;
  deployment: WorkerDeployment;
  service: WorkerService;
  lease: Lease;
  /** This run resumes a release in its window. */
  resumeAt?: ResumePoint;
}

async function runClaimed(deps: DeployProcessorDeps, claimed: ClaimedRun): Promise<{ status: string }> {
  const { job, deployment, service, lease, resumeAt } = claimed;
  // A rollback runs an earlier release's variables: their values are secrets too.
  const target = deployment.rollbackOf ? await deps.deployments.findById(deployment.rollbackOf) : null;
  // The attached groups' values are the environment too (docs/secrets.md#variable-groups).
  const redact = createRedactor({
    ...prefixed(target?.sourceVariables ?? {}),
    ...prefixedWith('group', service.groups.variables),
    ...service.variables,
  });
  const log = await createDeployLog(deps.deployments, deployment.id, redact, () =>
    deps.notify(deployment.id),
  );
  // A resumed release has what is left of the deployment's time (counted from its claim).
  const timeout = AbortSignal.timeout(
    resumeAt && deployment.startedAt
      ? Math.max(0, deps.deployTimeoutMs - (Date.now() - deployment.startedAt.getTime()))
      : deps.deployTimeoutMs,
  );
  // A delete cancels the deployment in PostgreSQL; noticing it aborts even a long wait at once.
  const cancellation = new AbortController();
  // Cancelled while it paused: the resumed release undoes at once.
  if (deployment.status === 'cancelled') cancellation.abort(new DeploymentCancelledError());
  // The lock lives on a database connection: if that connection dropped, PostgreSQL released the
  // lock and another replica may take the service, so this run must stop and retry from scratch.
  const lockLost = new AbortController();
  const watcher = setInterval(() => {
    if (!lease.isHeld) lockLost.abort(new Error('lost the service lock (database connection dropped)'));
    deps.deployments
      .currentStatus(deployment.id)
      .then((status) => status === 'cancelled' && cancellation.abort(new DeploymentCancelledError()))
      .catch(() => undefined);
  }, CANCEL_POLL_MS);
  const signal = AbortSignal.any([timeout, cancellation.signal, lockLost.signal]);
  let step: DeployStep | null = resumeAt?.step ?? null;
  const advance = async (next: DeployStep, record: () => Promise<boolean>) => {
    signal.throwIfAborted();
    // Conditional on `running`: losing to a cancel (also at retire, which the API then refuses) stops here.
    if (!(await record())) {
      cancellation.abort(new DeploymentCancelledError());
      throw new DeploymentCancelledError();
    }
    step = next;
    deps.notify(deployment.id);
    await job.updateProgress({ step: next });
  };
  const checkpoint = (next: DeployStep) => advance(next, () => deps.deployments.setStep(deployment.id, next));
  const continuation = {
    ...(resumeAt ? { resumeAt } : {}),
    enterWindow: (next: ReleaseStep, startedAt: number) =>
      advance(next, () => deps.deployments.enterWindow(deployment.id, next, new Date(startedAt))),
  };
  const attempt = job.attemptsMade + 1;
  const attempts = job.opts.attempts ?? 1;
  // A cancel, a timeout or a failure no retry fixes ends the deployment: the engine undoes it.
  const isFinal = (error: unknown) =>
    !lockLost.signal.aborted &&
    (cancellation.signal.aborted ||
      error instanceof DeploymentCancelledError ||
      timeout.aborted ||
      isPermanent(error) ||
      attempt >= attempts);
  if (!resumeAt) await log.info(`Deploying ${service.name} (attempt ${attempt} of ${attempts})`);
  try {
    const result = await runDeployPipeline(
      { ...deps.pipeline, store: deps.deployments },
      { deployment, service, log, signal, checkpoint, isFinal, continuation },
    );
    const verb = { create: 'Deployed', redeploy: 'Redeployed', rollback: 'Rolled back to' }[
      deployment.trigger
    ];
    const message = `${verb} ${describe(result.plan)}`;
    await log.info(message);
    await deps.deployments.markSucceeded({
      deploymentId: deployment.id,
      serviceId: service.id,
      trigger: deployment.trigger,
      message,
      // The service keeps its source definition (redeploys re-interpolate current variables);
      // only methods that generate a definition (git, ai) publish the rendered one.
      ...(isRepositoryMethod(service.deployMethod)
        ? { compose: publishedCompose(result.plan, service) }
        : {}),
      // What this deployment ran becomes what the service reports (a PATCH that a later cancel
      // undid must not stay on the row): the variables and compose it recorded at validate.
      ...(await restoredSource(deps, deployment.id)),
      ...limitsOf(result.plan),
    });
    deps.notify(deployment.id);
    deps.logger.info({ deploymentId: deployment.id, serviceId: service.id }, 'deployment succeeded');
    await pruneImages(deps, log, service.id);
    return { status: 'succeeded' };
  } catch (error) {
    // The release waits for its window: the job comes back then and this slot takes other jobs.
    if (error instanceof ReleaseWaiting) {
      await job.moveToDelayed(error.until, claimed.token);
      throw new DelayedError();
    }
    // Not a failure of the deployment: the job is retried (or re-enqueued by the reconciler).
    if (lockLost.signal.aborted) throw lockLost.signal.reason;
    if (error instanceof ReleaseUndone)
      return await recordUndone(deps, log, {
        deployment,
        service,
        step,
        undone: error,
        isCancelled: error.reason instanceof DeploymentCancelledError || cancellation.signal.aborted,
        isTimedOut: timeout.aborted,
        redact,
      });
    return await recordFailure(deps, log, {
      deployment,
      service,
      step,
      error,
      redact,
      isTimedOut: timeout.aborted,
      isLastAttempt: attempt >= attempts,
    });
  } finally {
    clearInterval(watcher);
  }
}

/** Retention after a success; a failure here must not fail the release that just went live. */
async function pruneImages(deps: DeployProcessorDeps, log: DeployLog, serviceId: string) {
  try {
    const removed = await pruneBuiltImages(
      deps.pipeline.runtime,
      deps.deployments,
      serviceId,
      deps.releasesKept,
    );
    if (removed.length > 0)
      await log.info(
        `Removed built images of releases older than the last ${deps.releasesKept}: ${removed.join(', ')}`,
      );
  } catch (error) {
    deps.logger.warn({ serviceId, err: messageOf(error) }, 'could not remove old built images');
  }
  if (deps.registryImages) await prunePushedImages(deps, deps.registryImages, log, serviceId);
}

/** The registry's copies of releases older than the kept ones (a rollback needs the kept ones). */
async function prunePushedImages(
  deps: DeployProcessorDeps,
  registry: ImageRegistry,
  log: DeployLog,
  serviceId: string,
) {
  try {
    const kept = await deps.deployments.succeededReleases(serviceId, deps.releasesKept);
    const removed = await removePushedImages(
      registry,
      { id: serviceId, deploymentIds: await deps.deployments.allIds(serviceId) },
      new Set(kept.map((release) => release.id)),
    );
    if (removed.length > 0)
      await log.info(
        `Removed from the registry the images of releases older than the last ${deps.releasesKept}: ${removed.join(', ')}`,
      );
  } catch (error) {
    deps.logger.warn({ serviceId, err: messageOf(error) }, 'could not remove old images from the registry');
  }
}

async function recordFailure(
  deps: DeployProcessorDeps,
  log: DeployLog,
  failure: {
    deployment: WorkerDeployment;
    service: WorkerService;
    step: DeployStep | null;
    error: unknown;
    redact: (text: string) => string;
    isTimedOut: boolean;
    isLastAttempt: boolean;
  },
): Promise<never> {
  const { deployment, service, step } = failure;
  const cause = failure.isTimedOut
    ? `the deployment did not finish within ${Math.round(deps.deployTimeoutMs / 1000)}s`
    : messageOf(failure.error);
  const message = failure.redact(`${step ?? 'deploy'} step failed: ${cause}`);
  const isFinal = failure.isTimedOut || failure.isLastAttempt || isPermanent(failure.error);
  deps.logger.warn(
    {
      deploymentId: deployment.id,
      serviceId: service.id,
      step,
      isFinal,
      err: failure.redact(messageOf(failure.error)),
    },
    'deployment step failed',
  );
  if (!isFinal) {
    await log.error(`${message}; retrying`);
    throw failure.error;
  }
  await log.error(message);
  await deps.deployments.markFailed({
    deploymentId: deployment.id,
    serviceId: service.id,
    trigger: deployment.trigger,
    message,
    step,
  });
  deps.notify(deployment.id);
  throw new UnrecoverableError(message);
}

function describe(plan: Plan): string {
  const count = `${plan.containers.length} container${plan.containers.length === 1 ? '' : 's'}`;
  return plan.web ? `${count}; web endpoint ${plan.web.container}:${plan.web.port}` : count;
}

/** Service columns: the sum over containers of their limits (0 = unlimited). */
function limitsOf(plan: Plan): { memoryLimitMb: number; cpuLimit: number } {
  let memory = 0;
  let cpus = 0;
  for (const container of plan.containers) {
    memory += container.limits.memoryBytes ?? 0;
    cpus += container.limits.nanoCpus ?? 0;
  }
  return { memoryLimitMb: memory / (1024 * 1024), cpuLimit: cpus / 1e9 };
}

/**
 * A succeeded deployment gives the service the compose and variables it ran: for a rollback those
 * of its target, so the next redeploy does not bring the bad change back; until it succeeds the
 * service keeps its own. The variables are written only if the service no longer has the version
 * the deployment ran (docs/secrets.md#versions).
 */
async function restoredSource(
  deps: DeployProcessorDeps,
  deploymentId: string,
): Promise<{
  compose?: string;
  variables?: Record<string, string>;
  secretNames?: Record<string, string>;
  variablesVersion?: number | null;
}> {
  const ran = await deps.deployments.findById(deploymentId);
  return {
    ...(ran?.sourceCompose != null ? { compose: ran.sourceCompose } : {}),
    ...(ran?.sourceVariables
      ? { variables: ran.sourceVariables, variablesVersion: ran.sourceVariablesVersion }
      : {}),
    ...(ran?.sourceVariables && ran.sourceSecretNames ? { secretNames: ran.sourceSecretNames } : {}),
  };
}

/** Keys that cannot collide with the service's own variable names (only the values matter). */
function prefixed(variables: Record<string, string>): Record<string, string> {
  return prefixedWith('rollback', variables);
}

function prefixedWith(prefix: string, variables: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(variables).map(([name, value]) => [`${prefix}:${name}`, value]));
}
