import type { WorkerService, WorkerServiceStore } from '@hostctl/db';
import { performLifecycleAction, type LifecycleProcessorDeps } from '../processors/lifecycle.processor.js';
import { messageOf } from '../pipeline/step-errors.js';

export type PauseDeps = Pick<LifecycleProcessorDeps, 'driver' | 'deployments'> & {
  services: Pick<WorkerServiceStore, 'setStatus'>;
};

/**
 * Runs `work` with the service stopped, through the lifecycle path a user's stop and start take,
 * and starts it again whatever `work` did: a failed backup or restore never leaves a service
 * stopped. A service that was not running is left as it was. When the start itself fails (twice),
 * the service is marked failed with the reason, as a failed user start would leave it.
 * The caller holds the service's lock, so the reconciler does not restart it meanwhile.
 */
export async function withServiceStopped<T>(
  deps: PauseDeps,
  service: WorkerService,
  log: (line: string) => Promise<void>,
  work: () => Promise<T>,
): Promise<T> {
  if (service.status !== 'running') {
    await log(`the service is ${service.status}: nothing to stop`);
    return work();
  }
  await log('stopping the service');
  try {
    await performLifecycleAction(deps, service, 'stop');
    return await work();
  } finally {
    await startAgain(deps, service, log);
  }
}

async function startAgain(deps: PauseDeps, service: WorkerService, log: (line: string) => Promise<void>) {
  let failure = '';
  for (let attempt = 1; attempt <= 2; attempt += 1) {
    try {
      await performLifecycleAction(deps, service, 'start');
      await log('the service is running again');
      return;
    } catch (error) {
      failure = messageOf(error);
      await log(`starting the service again failed (attempt ${attempt}): ${failure}`);
    }
  }
  await deps.services.setStatus(service.id, 'failed', {
    type: 'start',
    status: 'failed',
    message: `start after a backup or restore failed: ${failure}`,
  });
}
