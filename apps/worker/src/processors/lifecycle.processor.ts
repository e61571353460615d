import { UnrecoverableError, type Job } from 'bullmq';
import { COMPONENT_LABEL, LIFECYCLE_MESSAGES, statusAfter, type LifecycleAction } from '@hostctl/domain';
import { startOrder, type Plan, type PlanContainer } from '@hostctl/compose';
import type { AdvisoryLocks, WorkerDeploymentStore, WorkerServiceStore } from '@hostctl/db';
import type { JobPayload, LifecycleResult } from '@hostctl/queue';
import type { Logger } from 'pino';
import type { ContainerRuntime, ContainerSummary } from '../adapters/runtime.js';
import { createContainers, ensureNetworkAndVolumes } from '../pipeline/containers.step.js';
import { waitReady, type ReadinessOptions } from '../pipeline/readiness.js';
import { serviceObjects } from '../pipeline/service-objects.js';
import { PermanentStepError, createRedactor, messageOf } from '../pipeline/step-errors.js';

/**
 * start/stop/restart on a service's existing containers, in dependency order. Short jobs the API
 * awaits: the result carries the resulting status and a message; the action's failure is a result
 * too (status failed), not a job failure, so the API can show it as is.
 */
export interface LifecycleProcessorDeps {
  services: Pick<WorkerServiceStore, 'findById' | 'setStatus'>;
  deployments: Pick<WorkerDeploymentStore, 'lastSucceeded'>;
  locks: AdvisoryLocks;
  runtime: ContainerRuntime;
  instance: string;
  readiness: Omit<ReadinessOptions, 'signal'>;
  /** How long to wait for a running job of the same service before giving up. */
  lockWaitMs: number;
  logger: Logger;
}

const STOP_TIMEOUT_S = 10;
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
        await perform(deps, serviceId, action);
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

async function perform(
  deps: LifecycleProcessorDeps,
  serviceId: string,
  action: LifecycleAction,
): Promise<void> {
  const { runtime } = deps;
  const objects = serviceObjects(serviceId, deps.instance);
  const last = await deps.deployments.lastSucceeded(serviceId);
  const plan = isPlan(last?.plan) ? last.plan : undefined;
  const found = await runtime.listContainers(objects.selector);
  if (found.length === 0) {
    if (action === 'stop') return;
    if (!plan || !last)
      throw new PermanentStepError(
        'the service has no containers and no successful deployment to recreate them from; redeploy it',
      );
    // Containers removed behind our back: rebuild them from the last plan that worked.
    await ensureNetworkAndVolumes(runtime, plan, objects, quietLog, async () => {});
    const ids = await createContainers(runtime, plan, objects, last.id, quietLog);
    await startAll(
      deps,
      plan,
      [...ids].map(([component, id]) => ({
        id,
        name: component,
        labels: { [COMPONENT_LABEL]: component },
        state: 'created',
      })),
    );
    return;
  }
  const ordered = inStartOrder(found, plan);
  if (action !== 'start') {
    for (const container of [...ordered].reverse()) await runtime.stopContainer(container.id, STOP_TIMEOUT_S);
  }
  if (action !== 'stop') await startAll(deps, plan, ordered);
}

async function startAll(
  deps: LifecycleProcessorDeps,
  plan: Plan | undefined,
  containers: ContainerSummary[],
): Promise<void> {
  const ordered = inStartOrder(containers, plan);
  for (const container of ordered) await deps.runtime.startContainer(container.id);
  for (const container of ordered) {
    const component = container.labels[COMPONENT_LABEL] ?? container.name;
    await waitReady(deps.runtime, container.id, planContainer(plan, component), deps.readiness);
  }
}

/** Plan order when the plan is known; unknown components last, by name. */
function inStartOrder(containers: ContainerSummary[], plan: Plan | undefined): ContainerSummary[] {
  const order = plan ? startOrder(plan).map((container) => container.name) : [];
  const rank = (container: ContainerSummary) => {
    const index = order.indexOf(container.labels[COMPONENT_LABEL] ?? '');
    return index < 0 ? order.length : index;
  };
  return [...containers].sort((a, b) => rank(a) - rank(b) || a.name.localeCompare(b.name));
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

function isPlan(value: unknown): value is Plan {
  return typeof value === 'object' && value !== null && Array.isArray((value as Plan).containers);
}
