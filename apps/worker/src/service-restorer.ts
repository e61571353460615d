import { COMPONENT_LABEL, OWNER_LABEL, SERVICE_LABEL, SET_SIZE_LABEL, INSTANCE_LABEL } from '@hostctl/domain';
import type { Plan } from '@hostctl/compose';
import type { AdvisoryLocks, WorkerDeploymentStore, WorkerServiceStore } from '@hostctl/db';
import type { Logger } from 'pino';
import type { ServiceRouter } from './adapters/router.js';
import { type ContainerRuntime } from './adapters/runtime.js';
import type { ReadinessOptions } from './pipeline/readiness.js';
import { serviceObjects } from './pipeline/service-objects.js';
import { createRedactor, messageOf } from './pipeline/step-errors.js';
import { restoreRelease, type ReleaseDeps } from './release/release-engine.js';
import { storedPlan } from './release/release-images.js';
import type { SwarmRestarts } from './adapters/swarm-restarts.js';

/**
 * The reconciler's repair of `running` services whose containers are gone or exited (a Docker
 * restart stops every container without a restart policy; a person may `docker rm` one): rebuild
 * them from the last successful deployment's plan, exactly as that deployment created them. A
 * service with nothing to restore from, or that needed RESTORE_BUDGET restore attempts within
 * RESTORE_WINDOW_MS (it keeps dying, or restoring keeps failing), is marked `failed` with the
 * reason instead; each attempt is a `restart` event in the timeline. Under RUNTIME=swarm the same
 * budget and events apply to components Swarm itself does not bring back (swarm-restarts.ts).
 */
export interface RestorerDeps {
  services: Pick<WorkerServiceStore, 'findById' | 'listRunningIds' | 'setStatus' | 'countEventsSince'>;
  deployments: Pick<WorkerDeploymentStore, 'lastSucceeded'>;
  runtime: ContainerRuntime;
  router: ServiceRouter;
  locks: AdvisoryLocks;
  instance: string;
  readiness: Omit<ReadinessOptions, 'signal'>;
  /** The release engine: a restore brings the current release's set up the way a deploy does. */
  release: ReleaseDeps;
  logger: Logger;
  /** RUNTIME=swarm: services are found down and started again through Swarm. */
  swarmRestarts?: SwarmRestarts;
}

/** How one runtime's broken services are found and brought back. */
interface RestoreTarget {
  /** Of the running services, those worth examining under their lock (one cheap listing). */
  suspects(running: string[]): Promise<string[]>;
  /** Why the current release does not run as planned, or undefined when it does. */
  problem(
    serviceId: string,
    currentRelease: string | undefined,
    plan: Plan | undefined,
  ): Promise<string | undefined>;
  restore(
    service: { id: string; name: string; url: string },
    plan: Plan,
    deploymentId: string,
  ): Promise<void>;
}

export const RESTORE_BUDGET = 3;
export const RESTORE_WINDOW_MS = 10 * 60_000;
/** Services restored at once: a Docker restart downs them all, and each restore waits for readiness. */
const PARALLEL_RESTORES = 4;
/** Both restore events start with it, so the budget counts attempts, whatever their outcome. */
const RESTORE_EVENT_PREFIX = 'Reconciler restore';
const quietLog = { info: async () => {}, error: async () => {} };

export async function repairRunningServices(
  deps: RestorerDeps,
): Promise<{ restored: number; failed: number }> {
  const outcome = { restored: 0, failed: 0 };
  const target = deps.swarmRestarts ? swarmTarget(deps.swarmRestarts) : engineTarget(deps);
  const pending = await target.suspects(await deps.services.listRunningIds());
  const next = async (): Promise<void> => {
    for (let serviceId = pending.shift(); serviceId; serviceId = pending.shift()) {
      const result = await repairOne(deps, target, serviceId);
      if (result) outcome[result] += 1;
    }
  };
  await Promise.all(Array.from({ length: PARALLEL_RESTORES }, next));
  return outcome;
}

/**
 * One listing of the installation's containers instead of one lock and one listing per service:
 * only services with no container, one that is not running, or fewer containers than their
 * deployment has (its set-size label), are examined under their lock.
 */
function engineTarget(deps: RestorerDeps): RestoreTarget {
  return {
    suspects: (running) => engineSuspects(deps, running),
    problem: (serviceId, currentRelease, plan) => findProblem(deps, serviceId, currentRelease, plan),
    restore: (service, plan, deploymentId) =>
      restoreRelease(deps.release, { service, deploymentId, plan, log: quietLog }),
  };
}

/** Swarm: the components it will not start again get a forced update (new tasks, same release). */
function swarmTarget(restarts: SwarmRestarts): RestoreTarget {
  const describe = (components: string[]) =>
    `component(s) ${components.join(', ')} stopped and Swarm's restart policy does not start them again`;
  return {
    async suspects(running) {
      const stopped = await restarts.stopped();
      return running.filter((serviceId) => stopped.has(serviceId));
    },
    async problem(serviceId) {
      const components = (await restarts.stopped(serviceId)).get(serviceId);
      return components ? describe(components) : undefined;
    },
    async restore(service) {
      const components = (await restarts.stopped(service.id)).get(service.id) ?? [];
      await restarts.restart(service.id, components);
    },
  };
}

async function engineSuspects(deps: RestorerDeps, running: string[]): Promise<string[]> {
  const containers = await deps.runtime.listContainers({
    [OWNER_LABEL]: 'true',
    [INSTANCE_LABEL]: deps.instance,
  });
  const sets = new Map<string, { allUp: boolean; count: number; expected: number }>();
  for (const container of containers) {
    const serviceId = container.labels[SERVICE_LABEL];
    if (!serviceId) continue;
    const set = sets.get(serviceId) ?? { allUp: true, count: 0, expected: 0 };
    set.allUp &&= container.state === 'running' || container.state === 'restarting';
    set.count += 1;
    // Containers made before the label existed have none: 0 expects nothing.
    set.expected = Math.max(set.expected, Number(container.labels[SET_SIZE_LABEL] ?? 0) || 0);
    sets.set(serviceId, set);
  }
  return running.filter((serviceId) => {
    const set = sets.get(serviceId);
    return !set || !set.allUp || set.count < set.expected;
  });
}

async function repairOne(
  deps: RestorerDeps,
  target: RestoreTarget,
  serviceId: string,
): Promise<'restored' | 'failed' | null> {
  // A job holding the service lock is changing its containers right now: not a crash.
  const lease = await deps.locks.tryAcquire(serviceId);
  if (!lease) return null;
  try {
    const last = await deps.deployments.lastSucceeded(serviceId);
    const plan = storedPlan(last);
    const problem = await target.problem(serviceId, last?.id, plan);
    if (!problem) return null;
    // Read again under the lock: a stop or delete may have happened since the list.
    const service = await deps.services.findById(serviceId);
    if (!service || service.deletedAt || service.status !== 'running') return null;
    const fail = async (reason: string) => {
      const isChanged = await deps.services.setStatus(
        serviceId,
        'failed',
        { type: 'status', status: 'failed', message: `Service failed: ${reason}` },
        ['running'],
      );
      if (isChanged) deps.logger.info({ serviceId, reason }, 'reconciler: marked a crashed service failed');
      return isChanged ? ('failed' as const) : null;
    };
    if (!plan || !last) return await fail(`${problem}; no successful deployment to restore it from`);
    const attempts = await deps.services.countEventsSince(serviceId, {
      type: 'restart',
      messageStartsWith: RESTORE_EVENT_PREFIX,
      since: new Date(Date.now() - RESTORE_WINDOW_MS),
    });
    if (attempts >= RESTORE_BUDGET)
      return await fail(
        `${problem}; the reconciler already tried ${attempts} restores in the last 10 minutes`,
      );
    try {
      await target.restore(service, plan, last.id);
    } catch (error) {
      // Not failed yet: a restore that races a Docker engine shutting down fails transiently, and
      // the next sweep tries again; the budget turns a lasting failure into `failed`.
      const reason = createRedactor(service.variables)(messageOf(error));
      await deps.services.setStatus(
        serviceId,
        'running',
        {
          type: 'restart',
          status: 'failed',
          message: `${RESTORE_EVENT_PREFIX} failed: ${problem}; ${reason}`,
        },
        ['running'],
      );
      deps.logger.warn({ serviceId, problem, err: reason }, 'reconciler: restore failed; next sweep retries');
      return null;
    }
    const isChanged = await deps.services.setStatus(
      serviceId,
      'running',
      { type: 'restart', status: 'success', message: `${RESTORE_EVENT_PREFIX}d the service: ${problem}` },
      ['running'],
    );
    deps.logger.info({ serviceId, problem, deploymentId: last.id }, 'reconciler: restored a service');
    return isChanged ? 'restored' : null;
  } finally {
    await lease.release();
  }
}

/** Why the current release's set is not running as planned, or undefined when it is. */
async function findProblem(
  deps: RestorerDeps,
  serviceId: string,
  currentRelease: string | undefined,
  plan: Plan | undefined,
): Promise<string | undefined> {
  const { runtime } = deps;
  const objects = serviceObjects(serviceId, deps.instance);
  // Only the current release's set: another one is a leftover for the reconciler, not the service.
  const containers = await runtime.listContainers(
    currentRelease ? objects.set(currentRelease).selector : objects.selector,
  );
  if (containers.length === 0) return 'its containers are missing';
  for (const container of containers) {
    if (container.state === 'running' || container.state === 'restarting') continue;
    const state = await runtime.inspectContainer(container.id);
    if (!state || state.isRunning || state.isRestarting) continue;
    const component = container.labels[COMPONENT_LABEL] ?? container.name;
    return state.status === 'created'
      ? `container ${component} was never started`
      : `container ${component} exited with code ${state.exitCode}`;
  }
  const present = new Set(containers.map((container) => container.labels[COMPONENT_LABEL]));
  const missing = plan?.containers.find((container) => !present.has(container.name));
  return missing ? `container ${missing.name} is missing` : undefined;
}
