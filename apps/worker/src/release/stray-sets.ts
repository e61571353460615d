import { DEPLOYMENT_LABEL, INSTANCE_LABEL, OWNER_LABEL, SERVICE_LABEL } from '@hostctl/domain';
import type { AdvisoryLocks, WorkerDeploymentStore, WorkerServiceStore } from '@hostctl/db';
import type { Logger } from 'pino';
import type { ContainerRuntime } from '../adapters/runtime.js';
import { repairWhileUnlocked } from '../processors/service-lock.js';
import { removeSet } from './container-sets.js';

/**
 * The reconciler's half of "exactly one set at rest": a container set (or a network of one) that
 * belongs neither to the current release nor to a deployment in flight is what a crash or a lost
 * cleanup left behind. It is removed, but only while the service lock is free: a job holding it is
 * cutting over right now, and two sets are exactly what a cutover has.
 */
export interface StraySetDeps {
  runtime: ContainerRuntime;
  locks: AdvisoryLocks;
  deployments: Pick<WorkerDeploymentStore, 'lastSucceeded' | 'inFlightIds'>;
  services: Pick<WorkerServiceStore, 'listLiveIds'>;
  instance: string;
  logger: Logger;
}

export async function removeStraySetsOfServices(deps: StraySetDeps): Promise<number> {
  const mine = { [OWNER_LABEL]: 'true', [INSTANCE_LABEL]: deps.instance };
  const setsOf = new Map<string, Set<string>>();
  for (const object of [
    ...(await deps.runtime.listContainers(mine)),
    ...(await deps.runtime.listNetworks(mine)),
  ]) {
    const serviceId = object.labels[SERVICE_LABEL];
    const deploymentId = object.labels[DEPLOYMENT_LABEL];
    if (!serviceId || !deploymentId) continue;
    setsOf.set(serviceId, (setsOf.get(serviceId) ?? new Set()).add(deploymentId));
  }
  const crowded = [...setsOf].filter(([, sets]) => sets.size > 1).map(([serviceId]) => serviceId);
  // Deleted services are the orphan sweep's: it removes everything of theirs.
  const live = await deps.services.listLiveIds(crowded);
  let removed = 0;
  for (const serviceId of crowded.filter((id) => live.has(id))) {
    await repairWhileUnlocked(
      deps.locks,
      serviceId,
      { logger: deps.logger, message: 'reconciler: could not remove a stray set; next sweep retries' },
      async () => {
        const current = (await deps.deployments.lastSucceeded(serviceId))?.id;
        const keep = new Set([
          ...(current ? [current] : []),
          ...(await deps.deployments.inFlightIds(serviceId)),
        ]);
        for (const deploymentId of setsOf.get(serviceId) ?? []) {
          if (keep.has(deploymentId)) continue;
          // No traffic goes to a stray set: no stop grace needed.
          await removeSet(
            deps.runtime,
            { selector: { [SERVICE_LABEL]: serviceId, [DEPLOYMENT_LABEL]: deploymentId } },
            undefined,
            false,
          );
          removed += 1;
          deps.logger.info(
            { serviceId, deploymentId, currentRelease: current },
            'reconciler: removed a stray container set',
          );
        }
      },
    );
  }
  return removed;
}
