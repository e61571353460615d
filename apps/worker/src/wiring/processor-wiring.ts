import { containerLimitPolicy } from '@hostctl/compose';
import type { WorkerConfig } from '@hostctl/config';
import {
  createRunsStore,
  createExecSessionsStore,
  type AdvisoryLocks,
  type Db,
  type WorkerDeploymentStore,
  type WorkerNotificationStore,
  type WorkerServiceStore,
} from '@hostctl/db';
import { runOutputStreamKey, serviceLogStreamKey } from '@hostctl/queue';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { ContainerRuntime } from '../adapters/runtime.js';
import { createBackupProcessors } from '../backups/backup-processors.js';
import type { createNodes } from '../nodes/node-wiring.js';
import { notificationProcessorOf } from '../notifications/notification-wiring.js';
import { createDeleteProcessor } from '../processors/delete.processor.js';
import { createDeployProcessor } from '../processors/deploy.processor.js';
import { createLifecycleProcessor } from '../processors/lifecycle.processor.js';
import type { ReleaseDeps } from '../release/release-engine.js';
import { createLiveOutput } from '../runs/live-output.js';
import { createRunProcessor } from '../runs/run.processor.js';
import { createExecProcessor } from '../terminals/exec.processor.js';
import { secretValuesOf } from '../logs/secret-values.js';
import type { RuntimeWiring } from '../runtime/runtime-wiring.js';
import type { createRepositorySources, workerSourcePolicy } from '../sources/source-wiring.js';
import type { Processors } from '../workers.js';

/** What the job handlers are built from: the composition root's shared pieces. */
export interface ProcessorParts {
  config: WorkerConfig;
  db: Db;
  connection: Redis;
  locks: AdvisoryLocks;
  logger: Logger;
  runtime: ContainerRuntime;
  release: ReleaseDeps;
  runtimeWiring: Pick<RuntimeWiring, 'driver' | 'registryImages'>;
  deployments: WorkerDeploymentStore;
  services: WorkerServiceStore;
  notifications: WorkerNotificationStore;
  sourcePolicy: ReturnType<typeof workerSourcePolicy>;
  sources: ReturnType<typeof createRepositorySources>;
  nodes: Pick<ReturnType<typeof createNodes>, 'processor'>;
  /** Wakes the API's followers of a deployment (deploymentChannel). */
  notify: (deploymentId: string) => void;
  /** Queues a deployment the worker created (a service cloned from a backup, once restored). */
  enqueueDeploy: (deploymentId: string) => Promise<void>;
}

/** One handler per job of the catalog (workers.ts types it: a job without a handler does not compile). */
export function createProcessors(parts: ProcessorParts): Processors {
  const { config, db, locks, logger, deployments, services } = parts;
  const { driver, registryImages } = parts.runtimeWiring;
  const instance = config.QUEUE_PREFIX;
  const images = registryImages ? { registryImages } : {};
  const lifecycle = { deployments, driver };
  return {
    deploy: createDeployProcessor({
      deployments,
      services,
      locks,
      logger,
      notify: parts.notify,
      deployTimeoutMs: config.DEPLOY_TIMEOUT_MS,
      customerShare: config.DEPLOY_CUSTOMER_CONCURRENCY,
      releasesKept: config.RELEASES_KEPT,
      ...images,
      pipeline: {
        runtime: parts.runtime,
        driver,
        sources: parts.sources,
        containerLimits: containerLimitPolicy(config),
        images: { policy: parts.sourcePolicy.imagePolicy },
      },
    }),
    delete: createDeleteProcessor({
      deployments,
      services,
      locks,
      driver,
      ...images,
      logger,
      purgeLogs: async (serviceId) => {
        await parts.connection.del(serviceLogStreamKey(config.QUEUE_PREFIX, serviceId));
      },
    }),
    lifecycle: createLifecycleProcessor({ ...lifecycle, services, locks, lockWaitMs: 5000, logger }),
    ...createBackupProcessors({
      config,
      db,
      locks,
      services,
      lifecycle,
      instance,
      logger,
      endpointPolicy: {
        allowedHosts: parts.sourcePolicy.backupTargetAllowedHosts,
        protectedEndpoints: parts.sourcePolicy.protectedEndpoints,
      },
      enqueueDeploy: parts.enqueueDeploy,
    }),
    'node-availability': parts.nodes.processor,
    // Terminals open where the driver finds the container: this engine, or a Swarm task's node.
    exec: createExecProcessor({
      sessions: createExecSessionsStore(db),
      driver,
      redis: parts.connection,
      prefix: instance,
      logger,
    }),
    run: createRunProcessor({
      runs: createRunsStore(db),
      deployments,
      driver,
      secretsOf: secretValuesOf(db),
      // Followed where the driver runs the command: a container here, a Swarm job's task on the manager.
      liveOutput: (runId, secrets) =>
        createLiveOutput({
          telemetry: driver.runOutput,
          redis: parts.connection,
          key: runOutputStreamKey(instance, runId),
          secrets,
          logger,
        }),
      logger,
    }),
    notify: notificationProcessorOf(config, parts.notifications, parts.sourcePolicy, logger),
  };
}
