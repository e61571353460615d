import { OWNER_LABEL, SERVICE_LABEL, INSTANCE_LABEL } from '@hostctl/domain';
import type { AdvisoryLocks, WorkerDeploymentStore, WorkerServiceStore } from '@hostctl/db';
import { JOBS, jobIdOf, type JobPayload, type Producer } from '@hostctl/queue';
import type { Logger } from 'pino';
import type { ServiceRouter } from './adapters/router.js';
import { type ContainerRuntime } from './adapters/runtime.js';
import { messageOf } from './pipeline/step-errors.js';
import type { RuntimeDriver } from './runtime/driver.js';
import { repairRunningServices, type RestorerDeps } from './service-restorer.js';
import { syncRoutes } from './network/route-sync.js';

/**
 * Level-triggered repair loop: compares PostgreSQL (desired) with Redis and the runtime (actual).
 * Re-enqueues accepted work whose job was lost, removes orphans it owns and what dead releases
 * left (the runtime's leftovers: stray container sets; under Swarm, standbys), restores running services whose containers
 * died (or marks them failed) and re-applies lost routes. It only ever touches objects labelled as
 * this installation's; one replica runs it at a time (advisory lock per sweep), while the egress
 * firewall check at its start runs on every replica.
 */
export interface ReconcilerDeps extends RestorerDeps {
  deployments: Pick<WorkerDeploymentStore, 'listUnfinished' | 'lastSucceeded' | 'inFlightIds'>;
  services: Pick<
    WorkerServiceStore,
    'listPendingDeletes' | 'listLiveIds' | 'listRunningIds' | 'setStatus' | 'findById' | 'countEventsSince'
  >;
  producer: Producer;
  /** This machine's engine: objects of this installation whose service is gone are found there. */
  runtime: ContainerRuntime;
  router: ServiceRouter;
  locks: AdvisoryLocks;
  instance: string;
  /** A deployment queued for longer than this without a job is re-enqueued. */
  queuedGraceMs: number;
  logger: Logger;
  /**
   * The runtime: tears orphans down, sweeps what dead releases left (stray sets, standbys),
   * restores broken services and says where routes go.
   */
  driver: Pick<RuntimeDriver, 'tearDown' | 'sweepLeftovers' | 'restoreTarget' | 'webEndpoints'>;
  /** Re-installs the egress firewall rules a Docker or firewall restart may have removed (every replica, no lease). */
  egress?: { ensure(): Promise<void> };
  /** Sees each sweep: metrics. */
  onSweep?(result: 'ok' | 'error' | 'skipped', seconds?: number, repairs?: Repairs): void;
}

export interface Repairs {
  deploysRequeued: number;
  deletesRequeued: number;
  orphansRemoved: number;
  /**
   * Container sets of neither the current release nor a deployment in flight (a crash's
   * leftovers); under Swarm, standbys of deployments that are over.
   */
  straySetsRemoved: number;
  servicesRestored: number;
  servicesFailed: number;
  /** Proxy routes re-applied (lost by a Caddy restart, stale address) or removed (service gone). */
  routesRepaired: number;
}

export function createReconciler(deps: ReconcilerDeps) {
  const { logger } = deps;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;

  const runOnce = async (): Promise<Repairs | null> => {
    await deps.egress?.ensure();
    const lease = await deps.locks.tryAcquire(`hostctl:reconciler:${deps.instance}`);
    if (!lease) return null;
    try {
      const repairs: Repairs = {
        deploysRequeued: 0,
        deletesRequeued: 0,
        orphansRemoved: 0,
        straySetsRemoved: 0,
        servicesRestored: 0,
        servicesFailed: 0,
        routesRepaired: 0,
      };
      for (const deployment of await deps.deployments.listUnfinished(
        new Date(Date.now() - deps.queuedGraceMs),
      )) {
        if (await ensureJob(deps, { name: 'deploy', payload: { deploymentId: deployment.id } }))
          repairs.deploysRequeued += 1;
      }
      for (const serviceId of await deps.services.listPendingDeletes()) {
        if (await ensureJob(deps, { name: 'delete', payload: { serviceId } })) repairs.deletesRequeued += 1;
      }
      repairs.orphansRemoved = await removeOrphans(deps);
      repairs.straySetsRemoved = await deps.driver.sweepLeftovers(deps);
      const services = await repairRunningServices(deps);
      repairs.servicesRestored = services.restored;
      repairs.servicesFailed = services.failed;
      const routes = await syncRoutes(deps);
      repairs.routesRepaired = routes.applied + routes.removed;
      return repairs;
    } finally {
      await lease.release();
    }
  };

  const tick = (intervalMs: number) => {
    const started = performance.now();
    running = runOnce()
      .then((repairs) => {
        const seconds = (performance.now() - started) / 1000;
        if (!repairs) return deps.onSweep?.('skipped');
        deps.onSweep?.('ok', seconds, repairs);
        const isRepaired = Object.values(repairs).some((count) => count > 0);
        // Quiet sweeps stay at debug: an idle installation must not fill the logs every interval.
        logger[isRepaired ? 'info' : 'debug'](
          { ...repairs, ms: Math.round(seconds * 1000) },
          'reconciler sweep',
        );
      })
      .catch((error: unknown) => {
        deps.onSweep?.('error', (performance.now() - started) / 1000);
        logger.error({ err: messageOf(error) }, 'reconciler sweep failed');
      })
      .finally(() => {
        if (timer !== undefined) timer = setTimeout(() => tick(intervalMs), intervalMs);
      });
  };

  return {
    runOnce,
    start(intervalMs: number): void {
      logger.info({ intervalMs, queuedGraceMs: deps.queuedGraceMs }, 'reconciler started');
      timer = setTimeout(() => tick(intervalMs), Math.min(intervalMs, 1000));
    },
    async stop(): Promise<void> {
      clearTimeout(timer);
      timer = undefined;
      await running;
    },
  };
}

type LostJob =
  { name: 'deploy'; payload: JobPayload<'deploy'> } | { name: 'delete'; payload: JobPayload<'delete'> };

/** Enqueues the job unless one is waiting, delayed or active; a finished leftover is replaced. */
async function ensureJob(deps: ReconcilerDeps, job: LostJob): Promise<boolean> {
  const jobId = job.name === 'deploy' ? jobIdOf('deploy', job.payload) : jobIdOf('delete', job.payload);
  const existing = jobId ? await deps.producer.queue(JOBS[job.name].queue).getJob(jobId) : undefined;
  const state = existing ? await existing.getState() : 'missing';
  if (state !== 'missing' && state !== 'completed' && state !== 'failed' && state !== 'unknown') return false;
  // A custom job id blocks re-adding while the finished job is kept: remove the leftover first.
  if (existing) await existing.remove();
  if (job.name === 'deploy') await deps.producer.enqueue('deploy', job.payload);
  else await deps.producer.enqueue('delete', job.payload);
  deps.logger.info(
    { job: job.name, ...job.payload, previousState: state },
    'reconciler: re-enqueued a job that was lost',
  );
  return true;
}

async function removeOrphans(deps: ReconcilerDeps): Promise<number> {
  const { runtime } = deps;
  const mine = { [OWNER_LABEL]: 'true', [INSTANCE_LABEL]: deps.instance };
  const objects = [
    ...(await runtime.listContainers(mine)),
    ...(await runtime.listNetworks(mine)),
    ...(await runtime.listVolumes(mine)),
  ];
  const ids = [
    ...new Set(
      objects.map((object) => object.labels[SERVICE_LABEL]).filter((id): id is string => Boolean(id)),
    ),
  ];
  const live = await deps.services.listLiveIds(ids);
  let removed = 0;
  for (const serviceId of ids.filter((id) => !live.has(id))) {
    try {
      removed += await deps.driver.tearDown(serviceId);
      deps.logger.info({ serviceId }, 'reconciler: removed objects of an unknown or purged service');
    } catch (error) {
      deps.logger.warn(
        { serviceId, err: messageOf(error) },
        'reconciler: orphan removal incomplete; next sweep retries',
      );
    }
  }
  return removed;
}
