import { COMPONENT_LABEL, OWNER_LABEL, SERVICE_LABEL } from '@hostctl/domain';
import type { AdvisoryLocks, WorkerDeploymentStore, WorkerServiceStore } from '@hostctl/db';
import { QUEUES, jobIds, type JobPayload, type Producer } from '@hostctl/queue';
import type { Logger } from 'pino';
import type { ServiceRouter } from './adapters/router.js';
import { INSTANCE_LABEL, type ContainerRuntime } from './adapters/runtime.js';
import { removeAll } from './processors/delete.processor.js';
import { messageOf } from './pipeline/step-errors.js';

/**
 * Level-triggered repair loop: compares PostgreSQL (desired) with Redis and Docker (actual).
 * Re-enqueues accepted work whose job was lost, removes orphans it owns and marks crashed
 * services failed. It only ever touches objects labelled as this installation's; one replica
 * runs it at a time (advisory lock per sweep).
 */
export interface ReconcilerDeps {
  deployments: Pick<WorkerDeploymentStore, 'listUnfinished'>;
  services: Pick<WorkerServiceStore, 'listPendingDeletes' | 'listLiveIds' | 'listRunningIds' | 'setStatus'>;
  producer: Producer;
  runtime: ContainerRuntime;
  router: ServiceRouter;
  locks: AdvisoryLocks;
  instance: string;
  /** A deployment queued for longer than this without a job is re-enqueued. */
  queuedGraceMs: number;
  logger: Logger;
}

export interface Repairs {
  requeued: number;
  orphansRemoved: number;
  servicesFailed: number;
}

export function createReconciler(deps: ReconcilerDeps) {
  const { logger } = deps;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;

  const runOnce = async (): Promise<Repairs | null> => {
    const lease = await deps.locks.tryAcquire(`hostctl:reconciler:${deps.instance}`);
    if (!lease) return null;
    try {
      const repairs: Repairs = { requeued: 0, orphansRemoved: 0, servicesFailed: 0 };
      for (const deployment of await deps.deployments.listUnfinished(
        new Date(Date.now() - deps.queuedGraceMs),
      )) {
        if (await ensureJob(deps, { name: 'deploy', payload: { deploymentId: deployment.id } }))
          repairs.requeued += 1;
      }
      for (const serviceId of await deps.services.listPendingDeletes()) {
        if (await ensureJob(deps, { name: 'delete', payload: { serviceId } })) repairs.requeued += 1;
      }
      repairs.orphansRemoved = await removeOrphans(deps);
      repairs.servicesFailed = await failCrashedServices(deps);
      return repairs;
    } finally {
      await lease.release();
    }
  };

  const tick = (intervalMs: number) => {
    running = runOnce()
      .catch((error: unknown) => logger.error({ err: messageOf(error) }, 'reconciler sweep failed'))
      .finally(() => {
        if (timer !== undefined) timer = setTimeout(() => tick(intervalMs), intervalMs);
      });
  };

  return {
    runOnce,
    start(intervalMs: number): void {
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
  const jobId = job.name === 'deploy' ? jobIds.deploy(job.payload) : jobIds.delete(job.payload);
  const existing = await deps.producer.queue(QUEUES.deployments).getJob(jobId);
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
      removed += await removeAll(deps, serviceId);
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

/** running → failed when a container exited and is not being restarted by Docker. */
async function failCrashedServices(deps: ReconcilerDeps): Promise<number> {
  const { runtime } = deps;
  let failed = 0;
  for (const serviceId of await deps.services.listRunningIds()) {
    // A job holding the service lock is changing its containers right now: not a crash.
    const lease = await deps.locks.tryAcquire(serviceId);
    if (!lease) continue;
    try {
      const containers = await runtime.listContainers({ [SERVICE_LABEL]: serviceId });
      let reason =
        containers.length === 0
          ? 'its containers are missing; start the service to recreate them'
          : undefined;
      for (const container of containers) {
        if (reason || (container.state !== 'exited' && container.state !== 'dead')) continue;
        const state = await runtime.inspectContainer(container.id);
        if (state && !state.isRunning && !state.isRestarting)
          reason = `container ${container.labels[COMPONENT_LABEL] ?? container.name} exited with code ${state.exitCode}`;
      }
      if (
        reason &&
        (await deps.services.setStatus(
          serviceId,
          'failed',
          { type: 'status', status: 'failed', message: `Service failed: ${reason}` },
          ['running'],
        ))
      ) {
        failed += 1;
        deps.logger.info({ serviceId, reason }, 'reconciler: marked a crashed service failed');
      }
    } finally {
      await lease.release();
    }
  }
  return failed;
}
