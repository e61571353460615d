import { COMPONENT_LABEL, DEPLOYMENT_LABEL, SERVICE_LABEL } from '@hostctl/domain';
import type { Plan } from '@hostctl/compose';
import type { AdvisoryLocks, WorkerDeploymentStore, WorkerServiceStore } from '@hostctl/db';
import type { Logger } from 'pino';
import { upstreamKey, type RoutedService, type ServiceRouter } from '../adapters/router.js';
import type { ServiceRuntime } from '../adapters/service-runtime.js';
import type { ContainerRuntime } from '../adapters/runtime.js';
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
  runtime: Pick<ContainerRuntime, 'listContainers' | 'inspectContainer'>;
  locks: AdvisoryLocks;
  logger: Logger;
  /** RUNTIME=swarm: the route goes to the current release's running tasks (they move between nodes). */
  swarm?: Pick<ServiceRuntime, 'webEndpoints'>;
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
  const web = plan.web;
  if (deps.swarm) {
    const targets = await deps.swarm.webEndpoints({ serviceId, deploymentId: current.id, plan });
    if (targets.length === 0) return null;
    return {
      upstream: upstreamKey(targets),
      route: { serviceId, serviceName: service.name, url: service.url, targets },
    };
  }
  // The current release's web container only: another set (a leftover) never gets the traffic.
  const [container] = await deps.runtime.listContainers({
    [SERVICE_LABEL]: serviceId,
    [DEPLOYMENT_LABEL]: current.id,
    [COMPONENT_LABEL]: web.container,
  });
  const state = container ? await deps.runtime.inspectContainer(container.id) : null;
  if (!state?.isRunning || !state.ip) return null;
  const target = { host: state.ip, port: web.port };
  return {
    upstream: upstreamKey([target]),
    route: { serviceId, serviceName: service.name, url: service.url, targets: [target] },
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
