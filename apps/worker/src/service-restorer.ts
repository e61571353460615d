import type { AdvisoryLocks, WorkerDeploymentStore, WorkerServiceStore } from '@hostctl/db';
import type { Logger } from 'pino';
import { createRedactor, messageOf } from './pipeline/step-errors.js';
import { storedPlan } from './release/release-images.js';
import type { RestoreTarget, RuntimeDriver } from './runtime/driver.js';

/**
 * The reconciler's repair of `running` services whose containers are gone or exited (a Docker
 * restart stops every container without a restart policy; a person may `docker rm` one): rebuild
 * them from the last successful deployment's plan, exactly as that deployment created them. A
 * service with nothing to restore from, or that needed RESTORE_BUDGET restore attempts within
 * RESTORE_WINDOW_MS (it keeps dying, or restoring keeps failing), is marked `failed` with the
 * reason instead; each attempt is a `restart` event in the timeline. What counts as broken and how
 * it is brought back is the runtime's (RuntimeDriver.restoreTarget: the single engine's container
 * sets, runtime/docker/docker-restore.ts; under Swarm the components Swarm does not start again).
 */
export interface RestorerDeps {
  services: Pick<WorkerServiceStore, 'findById' | 'listRunningIds' | 'setStatus' | 'countEventsSince'>;
  deployments: Pick<WorkerDeploymentStore, 'lastSucceeded'>;
  locks: AdvisoryLocks;
  /** The runtime: which running services look broken, why, and how they are brought back. */
  driver: Pick<RuntimeDriver, 'restoreTarget'>;
  logger: Logger;
}

export const RESTORE_BUDGET = 3;
export const RESTORE_WINDOW_MS = 10 * 60_000;
/** Services restored at once: a Docker restart downs them all, and each restore waits for readiness. */
const PARALLEL_RESTORES = 4;
/** Both restore events start with it, so the budget counts attempts, whatever their outcome. */
const RESTORE_EVENT_PREFIX = 'Reconciler restore';

export async function repairRunningServices(
  deps: RestorerDeps,
): Promise<{ restored: number; failed: number }> {
  const outcome = { restored: 0, failed: 0 };
  const target = deps.driver.restoreTarget;
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
