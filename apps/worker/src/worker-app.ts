import type { Worker } from 'bullmq';
import type { WorkerConfig } from '@hostctl/config';
import {
  createAdvisoryLocks,
  createDb,
  createWorkerDeploymentStore,
  createWorkerServiceStore,
} from '@hostctl/db';
import { createProducer, createRedis, deploymentChannel } from '@hostctl/queue';
import { pino, type Logger } from 'pino';
import { createDockerRuntime } from './adapters/docker-runtime.js';
import { noopRouter, type ServiceRouter } from './adapters/router.js';
import type { ContainerRuntime } from './adapters/runtime.js';
import { startHealthServer } from './health-server.js';
import { createDeleteProcessor } from './processors/delete.processor.js';
import { createDeployProcessor } from './processors/deploy.processor.js';
import { createLifecycleProcessor } from './processors/lifecycle.processor.js';
import { createReconciler } from './reconciler.js';
import { createWorkers } from './workers.js';

/**
 * Composition root: builds every dependency once from the validated config and wires them by
 * hand (no container library, no module singletons). Tests build the same app with their own
 * queue prefix, so what they exercise is what production runs.
 */
export interface WorkerAppOptions {
  logger?: Logger;
  runtime?: ContainerRuntime;
  router?: ServiceRouter;
  /** Run the periodic reconciler (default true); tests call reconciler.runOnce() themselves. */
  reconcile?: boolean;
  readiness?: { timeoutMs: number; stableMs: number };
  healthHost?: string;
}

export type WorkerApp = ReturnType<typeof createWorkerApp>;

export function createWorkerApp(config: WorkerConfig, options: WorkerAppOptions = {}) {
  const logger = options.logger ?? pino({ level: config.LOG_LEVEL, base: { app: 'worker' } });
  const db = createDb({ url: config.DATABASE_URL, max: config.WORKER_CONCURRENCY + 2 });
  // Each running job holds one connection for its service lock; lifecycle and reconciler need more.
  const locks = createAdvisoryLocks({ url: config.DATABASE_URL, max: config.WORKER_CONCURRENCY * 2 + 4 });
  const connection = createRedis(config.REDIS_URL, 'worker');
  const producer = createProducer(connection, config.QUEUE_PREFIX);
  const runtime = options.runtime ?? createDockerRuntime({ socketPath: config.DOCKER_SOCKET });
  const router = options.router ?? noopRouter;
  const deployments = createWorkerDeploymentStore(db);
  const services = createWorkerServiceStore(db);
  // The queue prefix names the installation; Docker objects carry it so reconcilers never cross.
  const instance = config.QUEUE_PREFIX;
  const readiness = options.readiness ?? { timeoutMs: 60_000, stableMs: 1000 };

  const notify = (deploymentId: string) => {
    connection
      .publish(deploymentChannel(config.QUEUE_PREFIX, deploymentId), 'changed')
      .catch(() => undefined);
  };

  const processors = {
    deploy: createDeployProcessor({
      deployments,
      services,
      locks,
      logger,
      notify,
      deployTimeoutMs: config.DEPLOY_TIMEOUT_MS,
      pipeline: { runtime, router, instance, readiness },
    }),
    delete: createDeleteProcessor({ deployments, services, locks, runtime, router, instance, logger }),
    lifecycle: createLifecycleProcessor({
      deployments,
      services,
      locks,
      runtime,
      instance,
      readiness,
      lockWaitMs: 5000,
      logger,
    }),
  };
  const workers: Worker[] = createWorkers({
    connection,
    prefix: config.QUEUE_PREFIX,
    concurrency: config.WORKER_CONCURRENCY,
    processors,
    logger,
  });
  const reconciler = createReconciler({
    deployments,
    services,
    producer,
    runtime,
    router,
    locks,
    instance,
    queuedGraceMs: 10_000,
    logger,
  });
  let health: Awaited<ReturnType<typeof startHealthServer>> | undefined;

  return {
    logger,
    reconciler,
    producer,
    get healthPort(): number {
      return health?.port ?? 0;
    },

    async start(): Promise<void> {
      health = await startHealthServer({
        host: options.healthHost ?? '0.0.0.0',
        port: config.WORKER_HEALTH_PORT,
        checks: {
          postgres: async () => void (await db.$queryRaw`SELECT 1`),
          redis: async () => void (await connection.ping()),
          docker: () => runtime.ping(),
        },
      });
      for (const worker of workers) void worker.run();
      await Promise.all(workers.map((worker) => worker.waitUntilReady()));
      if (options.reconcile !== false) reconciler.start(config.RECONCILE_INTERVAL_MS);
    },

    /** Lets running jobs finish for up to `graceMs`; a job cut short is retried by another replica. */
    async close(graceMs = 20_000): Promise<void> {
      await reconciler.stop();
      const graceful = Promise.all(workers.map((worker) => worker.close()));
      const isClean = await Promise.race([
        graceful.then(() => true),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), graceMs).unref()),
      ]);
      if (!isClean) {
        logger.warn({ graceMs }, 'jobs still running at shutdown; closing anyway (they will be retried)');
        await Promise.all(workers.map((worker) => worker.close(true)));
      }
      await health?.close();
      await producer.close();
      await connection.quit().catch(() => undefined);
      await locks.close();
      await db.$disconnect();
    },
  };
}
