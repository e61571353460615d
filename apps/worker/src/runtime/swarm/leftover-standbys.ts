import type { SwarmStandby } from '../../adapters/swarm-standby.js';
import { repairWhileUnlocked } from '../../processors/service-lock.js';
import type { LeftoverDeps } from '../driver.js';

/**
 * RUNTIME=swarm's leftovers: Swarm has no container sets to sweep; what a dead release leaves is
 * its standby (adapters/swarm-standby.ts), once its worker died and the job was not resumed. One
 * of a deployment still in flight stays: the resumed job removes it at its end, and until then it
 * answers while Swarm carries the update on.
 */
export async function removeLeftoverStandbys(
  deps: Pick<LeftoverDeps, 'locks' | 'logger'> & {
    deployments: Pick<LeftoverDeps['deployments'], 'inFlightIds'>;
    standby: Pick<SwarmStandby, 'held' | 'release'>;
  },
): Promise<number> {
  let removed = 0;
  for (const serviceId of await deps.standby.held()) {
    await repairWhileUnlocked(
      deps.locks,
      serviceId,
      { logger: deps.logger, message: 'reconciler: could not remove a standby; next sweep retries' },
      async () => {
        if ((await deps.deployments.inFlightIds(serviceId)).length > 0) return;
        await deps.standby.release(serviceId);
        removed += 1;
        deps.logger.info({ serviceId }, 'reconciler: removed the standby of a deployment that is over');
      },
    );
  }
  return removed;
}
