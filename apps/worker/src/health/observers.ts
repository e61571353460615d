import type { WorkerConfig } from '@hostctl/config';
import {
  createServiceAlertsStore,
  createServiceMetricsStore,
  createWorkerTelemetryStore,
  type AdvisoryLocks,
  type Db,
  type WorkerServiceStore,
} from '@hostctl/db';
import { createRedis } from '@hostctl/queue';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { ObservedRuntime } from '../runtime/driver.js';
import { createLogShipper, type LogShipper } from '../logs/log-shipper.js';
import { secretValuesOf } from '../logs/secret-values.js';
import { createHistoryPruner } from '../resources/history-pruner.js';
import { createResourceSampler } from '../resources/resource-sampler.js';
import { createHealthMonitor } from './health-monitor.js';
import { createLeadership } from './leadership.js';

/**
 * Everything that watches running services rather than changing them: the log shipper (one per
 * Docker host, Redis lease), the health monitor, the resource sampler and the pruner of its
 * history (one replica at a time, PostgreSQL advisory lock). Built here so the composition root only starts and stops them.
 */
export interface ObserversDeps {
  config: Pick<WorkerConfig, 'REDIS_URL' | 'QUEUE_PREFIX' | 'HEALTH_INTERVAL_MS' | 'RESOURCE_INTERVAL_MS'>;
  db: Db;
  locks: AdvisoryLocks;
  /** What runs and what it uses, as the runtime sees it (Swarm: the manager's tasks, on every node). */
  observed: ObservedRuntime;
  services: Pick<WorkerServiceStore, 'setStatus' | 'listRunningIds'>;
  logger: Logger;
}

export function createObservers(deps: ObserversDeps) {
  const { config, logger, locks } = deps;
  const instance = config.QUEUE_PREFIX;
  const { containers: runtime, telemetry } = deps.observed;
  const store = createWorkerTelemetryStore(deps.db);
  const leadership = createLeadership(locks, `hostctl:observers:${instance}`);
  const health = createHealthMonitor({
    store,
    services: deps.services,
    runtime,
    telemetry,
    locks,
    leadership,
    intervalMs: config.HEALTH_INTERVAL_MS,
    logger,
  });
  const history = createServiceMetricsStore(deps.db);
  const resources = createResourceSampler({
    store,
    history,
    alerts: createServiceAlertsStore(deps.db),
    services: deps.services,
    runtime,
    telemetry,
    leadership,
    intervalMs: config.RESOURCE_INTERVAL_MS,
    logger,
  });
  const pruner = createHistoryPruner({ store: history, leadership, logger });
  // Its own Redis connection, made on start: log batches must not queue behind BullMQ commands.
  let redis: Redis | undefined;
  let shipper: LogShipper | undefined;

  return {
    health,
    resources,
    start(): void {
      redis ??= createRedis(config.REDIS_URL, 'worker');
      shipper ??= createLogShipper({
        redis,
        runtime,
        telemetry,
        instance,
        logger,
        secretsOf: secretValuesOf(deps.db),
      });
      shipper.start();
      health.start();
      resources.start();
      pruner.start();
    },
    async stop(): Promise<void> {
      await Promise.all([shipper?.stop(), health.stop(), resources.stop(), pruner.stop()]);
      await leadership.release().catch(() => undefined);
      await redis?.quit().catch(() => undefined);
    },
  };
}

export type Observers = ReturnType<typeof createObservers>;
