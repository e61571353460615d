import type { AdvisoryLocks, WorkerServiceStore } from '@hostctl/db';
import type { Logger } from 'pino';
import { upstreamKey, type ServiceRouter } from '../adapters/router.js';
import { runningWebEndpoints, type ServiceRuntime } from '../runtime/driver.js';
import type { SwarmUpdates } from '../adapters/swarm-updates.js';
import { createPeriodic } from '../health/periodic.js';
import { repairWhileUnlocked } from '../processors/service-lock.js';

/**
 * RUNTIME=swarm: keeps the route of a service Swarm is updating on its running web tasks when no
 * worker's deploy job does. Swarm carries an update on by itself: when the worker running the
 * release dies, the new task still starts and Swarm then stops the old one, which the route still
 * points at, so every request fails until a worker routes again (seen: 102 of 4,390 requests in
 * 0.5 s, 470 of 3,785 in 1.8 s, before this ran). Every worker runs this follower, not one lease
 * holder: it must keep going whichever replica dies. A service whose lock is held is skipped: the
 * job holding it follows the tasks itself (swarm-release.ts) and routes the release at its end.
 */
export interface UpdateRouteFollowerDeps {
  updates: SwarmUpdates;
  serviceRuntime: Pick<ServiceRuntime, 'observe'>;
  router: ServiceRouter;
  services: Pick<WorkerServiceStore, 'findById'>;
  locks: AdvisoryLocks;
  /** How often it looks (the deploy job's own follower looks every 500 ms). */
  intervalMs: number;
  logger: Logger;
}

export function createUpdateRouteFollower(deps: UpdateRouteFollowerDeps) {
  const { logger } = deps;

  /** One look at the services Swarm is replacing; resolves to how many routes it moved. */
  const runOnce = async (): Promise<number> => {
    const replacing = await deps.updates.replacing();
    if (replacing.length === 0 || !deps.router.list) return 0;
    const routed = new Map((await deps.router.list()).map((route) => [route.serviceId, route.upstream]));
    let moved = 0;
    // A service without a route is not serving yet (or stopped): its deploy or the reconciler routes it.
    for (const serviceId of replacing.filter((id) => routed.has(id))) {
      await repairWhileUnlocked(
        deps.locks,
        serviceId,
        { logger, message: 'could not follow a Swarm update; next look retries' },
        async () => {
          const service = await deps.services.findById(serviceId);
          if (!service || service.deletedAt) return;
          const targets = runningWebEndpoints(await deps.serviceRuntime.observe(serviceId));
          const upstream = upstreamKey(targets);
          if (targets.length === 0 || upstream === routed.get(serviceId)) return;
          await deps.router.upsert({ serviceId, serviceName: service.name, url: service.url, targets });
          moved += 1;
          logger.info({ serviceId, upstream }, 'route moved to the running tasks of a Swarm update');
        },
      );
    }
    return moved;
  };

  const periodic = createPeriodic('Swarm update follower', deps.intervalMs, runOnce, logger);
  return { runOnce, start: periodic.start, stop: periodic.stop };
}
