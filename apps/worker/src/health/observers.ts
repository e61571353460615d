import type { WorkerConfig } from '@hostctl/config';
import {
  createWorkerTelemetryStore,
  type AdvisoryLocks,
  type Db,
  type WorkerServiceStore,
} from '@hostctl/db';
import { createRedis } from '@hostctl/queue';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { createDockerTelemetry } from '../adapters/docker-telemetry.js';
import type { ContainerRuntime } from '../adapters/runtime.js';
import { createSwarmObservation, type ObservedContainers } from '../adapters/swarm-telemetry.js';
import type { NodeEngines } from '../adapters/swarm-node-engines.js';
import type { ContainerTelemetry } from '../adapters/telemetry.js';
import { createLogShipper, type LogShipper } from '../logs/log-shipper.js';
import { secretValuesOf } from '../logs/secret-values.js';
import { createResourceSampler } from '../resources/resource-sampler.js';
import { createHealthMonitor } from './health-monitor.js';
import { createLeadership } from './leadership.js';

/**
 * Everything that watches running services rather than changing them: the log shipper (one per
 * Docker host, Redis lease), the health monitor and the resource sampler (one replica at a time,
 * PostgreSQL advisory lock). Built here so the composition root only starts and stops them.
 */
export interface ObserversDeps {
  config: Pick<
    WorkerConfig,
    'REDIS_URL' | 'QUEUE_PREFIX' | 'DOCKER_SOCKET' | 'HEALTH_INTERVAL_MS' | 'RESOURCE_INTERVAL_MS'
  >;
  db: Db;
  locks: AdvisoryLocks;
  runtime: ContainerRuntime;
  services: Pick<WorkerServiceStore, 'setStatus' | 'listRunningIds'>;
  logger: Logger;
  telemetry?: ContainerTelemetry;
  /**
   * RUNTIME=swarm: the manager's socket. Services run as Swarm tasks there, possibly on other
   * nodes, so the observers watch the manager's tasks instead of `runtime`'s containers.
   */
  swarmManagerSocket?: string;
  /** RUNTIME=swarm: the engines of other nodes, where their tasks' usage is read (SWARM_NODE_ENGINES). */
  swarmNodeEngines?: NodeEngines;
}

export function createObservers(deps: ObserversDeps) {
  const { config, logger, locks } = deps;
  const instance = config.QUEUE_PREFIX;
  const swarm = deps.swarmManagerSocket
    ? createSwarmObservation({
        socketPath: deps.swarmManagerSocket,
        ...(deps.swarmNodeEngines ? { nodeEngines: deps.swarmNodeEngines } : {}),
      })
    : undefined;
  const runtime: ObservedContainers = swarm?.containers ?? deps.runtime;
  const telemetry =
    deps.telemetry ?? swarm?.telemetry ?? createDockerTelemetry({ socketPath: config.DOCKER_SOCKET });
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
  const resources = createResourceSampler({
    store,
    services: deps.services,
    runtime,
    telemetry,
    leadership,
    intervalMs: config.RESOURCE_INTERVAL_MS,
    logger,
  });
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
    },
    async stop(): Promise<void> {
      await Promise.all([shipper?.stop(), health.stop(), resources.stop()]);
      await leadership.release().catch(() => undefined);
      await redis?.quit().catch(() => undefined);
    },
  };
}

export type Observers = ReturnType<typeof createObservers>;
