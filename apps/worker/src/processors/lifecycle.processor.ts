import { UnrecoverableError, type Job } from 'bullmq';
import { LIFECYCLE_MESSAGES, statusAfter, type LifecycleAction } from '@hostctl/domain';
import type { AdvisoryLocks, WorkerDeploymentStore, WorkerService, WorkerServiceStore } from '@hostctl/db';
import type { JobPayload, LifecycleResult } from '@hostctl/queue';
import type { Logger } from 'pino';
import { createRedactor, messageOf } from '../pipeline/step-errors.js';
import type { RuntimeDriver } from '../runtime/driver.js';

/**
 * start/stop/restart of a service's current release, through its runtime (on the single engine its
 * containers in dependency order, runtime/docker/docker-lifecycle.ts). Short jobs the API
 * awaits: the result carries the resulting status and a message; the action's failure is a result
 * too (status failed), not a job failure, so the API can show it as is.
 */
export interface LifecycleProcessorDeps {
  services: Pick<WorkerServiceStore, 'findById' | 'setStatus'>;
  deployments: Pick<WorkerDeploymentStore, 'lastSucceeded'>;
  locks: AdvisoryLocks;
  /** The runtime: its current release is started or stopped, and recreated when removed behind our back. */
  driver: Pick<RuntimeDriver, 'lifecycle'>;
  /** How long to wait for a running job of the same service before giving up. */
  lockWaitMs: number;
  logger: Logger;
}

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
  deps: Pick<LifecycleProcessorDeps, 'driver' | 'deployments'>,
  service: WorkerService,
  action: LifecycleAction,
): Promise<void> {
  await deps.driver.lifecycle(service, action, await deps.deployments.lastSucceeded(service.id));
}
