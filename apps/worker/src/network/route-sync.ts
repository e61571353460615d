import type { Plan } from '@hostctl/compose';
import type { AdvisoryLocks, WorkerDeploymentStore, WorkerServiceStore } from '@hostctl/db';
import type { Logger } from 'pino';
import { upstreamKey, type RoutedService, type ServiceRouter } from '../adapters/router.js';
import type { RuntimeDriver } from '../runtime/driver.js';
import { messageOf } from '../pipeline/step-errors.js';
import { repairWhileUnlocked } from '../processors/service-lock.js';

/**
 * The reconciler's half of routing: Caddy keeps routes in memory only, so after a Caddy restart
 * every running service must get its route back (and its DNS records, when the DNS server lost
 * them), and a route whose service is gone (unknown or purged) must go. Only routes of this
 * installation are seen (router.list). A service whose job holds its lock is skipped: the deploy
 * sets the route itself.
 */
export interface RouteSyncDeps {
  router: ServiceRouter;
  services: Pick<WorkerServiceStore, 'findById' | 'listRunningIds' | 'listLiveIds'>;
  deployments: Pick<WorkerDeploymentStore, 'lastSucceeded'>;
  locks: AdvisoryLocks;
  logger: Logger;
  /**
   * The runtime: the route goes to the current release's running web component only (another set,
   * a leftover, never gets the traffic; Swarm's tasks move between nodes).
   */
  driver: Pick<RuntimeDriver, 'webEndpoints'>;
}

export async function syncRoutes(deps: RouteSyncDeps): Promise<{ applied: number; removed: number }> {
  const outcome = { applied: 0, removed: 0 };
  if (!deps.router.list) return outcome;
  const routed = new Map((await deps.router.list()).map((route) => [route.serviceId, route]));
  const live = await deps.services.listLiveIds([...routed.keys()]);
  for (const serviceId of routed.keys()) {
    if (live.has(serviceId)) continue;
    await attempt(deps, serviceId, 'remove a route of a gone service', async () => {
      await deps.router.remove(serviceId);
      outcome.removed += 1;
    });
  }
  for (const serviceId of await deps.services.listRunningIds()) {
    await repairWhileUnlocked(
      deps.locks,
      serviceId,
      { logger: deps.logger, message: 'reconciler: could not restore a route; next sweep retries' },
      async () => {
        const wanted = await webTarget(deps, serviceId);
        if (!wanted) return;
        const why = repairReason(routed.get(serviceId), wanted.upstream);
        if (why === null) return;
        await deps.router.upsert(wanted.route);
        outcome.applied += 1;
        deps.logger.info({ serviceId, upstream: wanted.upstream, why }, 'reconciler: route (re)applied');
      },
    );
  }
  return outcome;
}

/** Why the route must be applied again, or null when what the router has is right. */
function repairReason(current: RoutedService | undefined, upstream: string): string | null {
  if (!current) return 'route missing';
  if (current.upstream !== upstream) return 'stale address';
  if (current.incomplete) return 'DNS records or proxy settings missing';
  return null;
}

async function webTarget(deps: RouteSyncDeps, serviceId: string) {
  const service = await deps.services.findById(serviceId);
  const current = await deps.deployments.lastSucceeded(serviceId);
  const plan = current?.plan as Plan | undefined;
  if (!service || service.deletedAt || !current || !plan?.web) return null;
  const targets = await deps.driver.webEndpoints({ serviceId, deploymentId: current.id, plan });
  if (targets.length === 0) return null;
  return {
    upstream: upstreamKey(targets),
    route: { serviceId, serviceName: service.name, url: service.url, targets },
  };
}

async function attempt(deps: RouteSyncDeps, serviceId: string, what: string, action: () => Promise<void>) {
  try {
    await action();
  } catch (error) {
    deps.logger.warn(
      { serviceId, err: messageOf(error) },
      `reconciler: could not ${what}; next sweep retries`,
    );
  }
}
