import { UnrecoverableError, type Job } from 'bullmq';
import { COMPONENT_LABEL, LIFECYCLE_MESSAGES, statusAfter, type LifecycleAction } from '@hostctl/domain';
import type { Plan, PlanContainer } from '@hostctl/compose';
import type { AdvisoryLocks, WorkerDeploymentStore, WorkerService, WorkerServiceStore } from '@hostctl/db';
import type { JobPayload, LifecycleResult } from '@hostctl/queue';
import type { Logger } from 'pino';
import type { ContainerSummary } from '../adapters/runtime.js';
import type { ServiceRuntime } from '../adapters/service-runtime.js';
import type { SwarmLifecycle } from '../adapters/swarm-lifecycle.js';
import { waitReady } from '../pipeline/readiness.js';
import { serviceObjects } from '../pipeline/service-objects.js';
import { PermanentStepError, createRedactor, messageOf } from '../pipeline/step-errors.js';
import { STOP_GRACE_S, inStartOrder } from '../release/container-sets.js';
import { restoreRelease, type ReleaseDeps } from '../release/release-engine.js';
import { storedPlan } from '../release/release-images.js';

/**
 * start/stop/restart on a service's existing containers, in dependency order. Short jobs the API
 * awaits: the result carries the resulting status and a message; the action's failure is a result
 * too (status failed), not a job failure, so the API can show it as is.
 */
export interface LifecycleProcessorDeps {
  services: Pick<WorkerServiceStore, 'findById' | 'setStatus'>;
  deployments: Pick<WorkerDeploymentStore, 'lastSucceeded'>;
  locks: AdvisoryLocks;
  /** The release engine: containers removed behind our back are recreated the way a deploy makes them. */
  release: ReleaseDeps;
  /** How long to wait for a running job of the same service before giving up. */
  lockWaitMs: number;
  logger: Logger;
  /** RUNTIME=swarm: Swarm services are scaled (adapters/swarm-lifecycle.ts), and the route follows the new tasks. */
  swarm?: { lifecycle: SwarmLifecycle; runtime: Pick<ServiceRuntime, 'webEndpoints'> };
}

const quietLog = { info: async () => {}, error: async () => {} };

export function createLifecycleProcessor(deps: LifecycleProcessorDeps) {
  return async (job: Job<JobPayload<'lifecycle'>>): Promise<LifecycleResult> => {
    const { serviceId, action } = job.data;
    const lease = await deps.locks.acquire(serviceId, deps.lockWaitMs);
    if (!lease)
      throw new UnrecoverableError(
        `another operation on this service is still running; try ${action} again shortly`,
      );
    try {
      const service = await deps.services.findById(serviceId);
      if (!service || service.deletedAt)
        throw new UnrecoverableError('the service does not exist or is being deleted');
      if (service.status === 'deploying')
        return { status: 'deploying', message: 'a deployment is in progress' };
      try {
        await performLifecycleAction(deps, service, action);
      } catch (error) {
        const message = `${action} failed: ${createRedactor(service.variables)(messageOf(error))}`;
        // A failed stop leaves the service as it was; a failed start or restart leaves it down.
        const status = action === 'stop' ? service.status : 'failed';
        await deps.services.setStatus(serviceId, status, { type: action, status: 'failed', message });
        deps.logger.warn({ serviceId, action, err: message }, 'lifecycle action failed');
        return { status, message };
      }
      const status = statusAfter(action);
      const message = LIFECYCLE_MESSAGES[action].done;
      await deps.services.setStatus(serviceId, status, { type: action, status: 'success', message });
      deps.logger.info({ serviceId, action }, 'lifecycle action done');
      return { status, message };
    } finally {
      await lease.release();
    }
  };
}

/**
 * The action itself, for a caller that holds the service's lock already (the backup and restore
 * processors stop and start a service this way: the same path as a user's stop and start).
 */
export async function performLifecycleAction(
  deps: Pick<LifecycleProcessorDeps, 'release' | 'deployments' | 'swarm'>,
  service: WorkerService,
  action: LifecycleAction,
): Promise<void> {
  const { runtime } = deps.release;
  const objects = serviceObjects(service.id, deps.release.instance);
  const last = await deps.deployments.lastSucceeded(service.id);
  const plan = storedPlan(last);
  if (deps.swarm)
    return performOnSwarm(
      deps,
      deps.swarm,
      service,
      action,
      last && plan ? { id: last.id, plan } : undefined,
    );
  // Only the current release's set: another one is a leftover the reconciler removes.
  const found = await runtime.listContainers(last ? objects.set(last.id).selector : objects.selector);
  if (found.length === 0) {
    if (action === 'stop') return;
    if (!plan || !last)
      throw new PermanentStepError(
        'the service has no containers and no successful deployment to recreate them from; redeploy it',
      );
    // Containers removed behind our back: rebuild them from the last plan that worked.
    await restoreRelease(deps.release, { service, deploymentId: last.id, plan, log: quietLog });
    return;
  }
  const ordered = inStartOrder(found, plan);
  if (action !== 'start') {
    for (const container of [...ordered].reverse()) await runtime.stopContainer(container.id, STOP_GRACE_S);
  }
  if (action !== 'stop') await startAll(deps, plan, ordered);
}

async function performOnSwarm(
  deps: Pick<LifecycleProcessorDeps, 'release'>,
  swarm: NonNullable<LifecycleProcessorDeps['swarm']>,
  service: WorkerService,
  action: LifecycleAction,
  last: { id: string; plan: Plan } | undefined,
): Promise<void> {
  await swarm.lifecycle.perform(service.id, action, last?.plan);
  if (action === 'stop' || !last?.plan.web) return;
  // New tasks publish new ports: the route goes to them.
  const targets = await swarm.runtime.webEndpoints({
    serviceId: service.id,
    deploymentId: last.id,
    plan: last.plan,
  });
  if (targets.length === 0) throw new PermanentStepError('no task of the web component publishes its port');
  await deps.release.router.upsert({
    serviceId: service.id,
    serviceName: service.name,
    url: service.url,
    targets,
  });
}

async function startAll(
  deps: Pick<LifecycleProcessorDeps, 'release'>,
  plan: Plan | undefined,
  containers: ContainerSummary[],
): Promise<void> {
  const { runtime, readiness } = deps.release;
  const ordered = inStartOrder(containers, plan);
  for (const container of ordered) await runtime.startContainer(container.id);
  for (const container of ordered) {
    const component = container.labels[COMPONENT_LABEL] ?? container.name;
    await waitReady(runtime, container.id, planContainer(plan, component), readiness);
  }
}

function planContainer(plan: Plan | undefined, component: string): PlanContainer {
  const known = plan?.containers.find((container) => container.name === component);
  return (
    known ?? {
      name: component,
      image: '',
      environment: {},
      labels: {},
      volumes: [],
      ports: [],
      dependsOn: [],
      restart: 'no',
      init: true,
      limits: {},
    }
  );
}
