import { UnrecoverableError } from 'bullmq';
import type { WorkerDeployment, WorkerService } from '@hostctl/db';
import type { DeployLog } from '../pipeline/deploy-log.js';
import { messageOf } from '../pipeline/step-errors.js';
import type { ReleaseUndone } from '../release/release-engine.js';
import type { DeployProcessorDeps } from './deploy.processor.js';

/**
 * The end of a deployment whose release did not go live (the engine already removed the new set
 * and put the previous release back in charge):
 * - cancelled (by request through the API, or by a delete): the API wrote the deployment's status
 *   and event; the service shows what serves now;
 * - failed after the switch: rolled_back, the service keeps running the previous release;
 * - failed before it: failed, and the service is `running` when the previous release was kept.
 */
export async function recordUndone(
  deps: Pick<DeployProcessorDeps, 'deployments' | 'services' | 'notify' | 'logger' | 'deployTimeoutMs'>,
  log: DeployLog,
  outcome: {
    deployment: WorkerDeployment;
    service: WorkerService;
    step: string | null;
    undone: ReleaseUndone;
    isCancelled: boolean;
    isTimedOut: boolean;
    redact: (text: string) => string;
  },
): Promise<{ status: string }> {
  const { deployment, service, step, undone } = outcome;
  const kept = undone.outcome.keptRelease;
  const ids = { deploymentId: deployment.id, serviceId: service.id };
  const serving = kept ? `the previous release ${kept} keeps serving` : 'no previous release is serving';
  if (outcome.isCancelled) {
    const current = await deps.services.findById(service.id);
    const why = !current || current.deletedAt ? 'the service is being deleted' : 'cancelled by request';
    await log.info(`Deployment cancelled (${why}); removed what it had started; ${serving}`);
    await deps.deployments.settleCancelled(deployment.id, service.id, kept ? 'running' : 'failed');
    deps.notify(deployment.id);
    deps.logger.info({ ...ids, step, why }, 'deployment cancelled');
    return { status: 'cancelled' };
  }
  const cause = outcome.isTimedOut
    ? `the deployment did not finish within ${Math.round(deps.deployTimeoutMs / 1000)}s`
    : messageOf(undone.reason);
  const error = outcome.redact(`${step ?? 'deploy'} step failed: ${cause}`);
  const base = { ...ids, trigger: deployment.trigger, step };
  await log.error(error);
  if (undone.outcome.switched && kept) {
    await log.info(`Rolled back: traffic went back to the previous release ${kept}`);
    await deps.deployments.markRolledBack({
      ...base,
      error,
      message: `Release rolled back after the switch; previous release ${kept} serves again: ${error}`,
    });
    deps.notify(deployment.id);
    deps.logger.warn({ ...ids, step, keptRelease: kept }, 'deployment rolled back');
    throw new UnrecoverableError(error);
  }
  if (kept) await log.info(`The previous release ${kept} was kept and keeps serving`);
  await deps.deployments.markFailed({
    ...base,
    error,
    message: kept ? `${error}; previous release ${kept} kept` : error,
    ...(kept ? { keptRelease: kept } : {}),
  });
  deps.notify(deployment.id);
  deps.logger.warn({ ...ids, step, keptRelease: kept }, 'deployment failed');
  throw new UnrecoverableError(error);
}
