import { containerLimitPolicy } from '@hostctl/compose';
import type { Worker } from 'bullmq';
import type { WorkerConfig } from '@hostctl/config';
import {
  createAdvisoryLocks,
  createWorkerDeploymentStore,
  createWorkerNotificationStore,
  createWorkerServiceStore,
  createRunsStore,
  createCustomDomainsStore,
  createTlsCertificatesStore,
} from '@hostctl/db';
import { QUEUES, createProducer, createRedis, deploymentChannel, serviceLogStreamKey } from '@hostctl/queue';
import { pino, type Logger } from 'pino';
import { createDockerRuntime } from './adapters/docker-runtime.js';
import { createRuntimeWiring } from './runtime/runtime-wiring.js';
import type { ServiceRouter } from './adapters/router.js';
import type { ContainerRuntime } from './adapters/runtime.js';
import { createConsumerWatchdog } from './consumer-watchdog.js';
import { startHealthServer } from './health-server.js';
import { createObservers } from './health/observers.js';
import { createNodes } from './nodes/node-wiring.js';
import { registerCertificateMetrics } from './metrics/certificate-metrics.js';
import { instrumentLocks } from './metrics/instrumented-locks.js';
import { recordSweeps } from './metrics/sweep-metrics.js';
import { createWorkerMetrics } from './metrics/worker-metrics.js';
import { createDeleteProcessor } from './processors/delete.processor.js';
import { createDeployProcessor } from './processors/deploy.processor.js';
import { createLifecycleProcessor } from './processors/lifecycle.processor.js';
import { createBackupProcessors } from './backups/backup-processors.js';
import { createNetworkRouter } from './network/network-wiring.js';
import { oneWriterPerZone } from './network/zone-writes.js';
import { notificationProcessorOf } from './notifications/notification-wiring.js';
import { createNotificationRelay } from './notifications/notification-relay.js';
import { createRunProcessor } from './runs/run.processor.js';
import { schedulerOf } from './schedules/scheduler-wiring.js';
import { createReconciler } from './reconciler.js';
import { createUsageMeter } from './metering/usage-meter.js';
import { createCertificates } from './tls/tls-wiring.js';
import { createRepositorySources, workerSourcePolicy } from './sources/source-wiring.js';
import { createWorkers } from './workers.js';
import { startParts, stopParts, type WorkerPart } from './worker-parts.js';
import { openWorkerDatabase, startSecrets } from './secrets-startup.js';
import { assertDockerNetworkNamespace } from './egress/egress-policy.js';
import { createWorkerEgress } from './egress/worker-egress.js';

/**
 * Composition root: builds every dependency once from the validated config and wires them by
 * hand (no container library, no module singletons). Tests build the same app with their own
 * queue prefix, so what they exercise is what production runs.
 */
export interface WorkerAppOptions {
  logger?: Logger;
  runtime?: ContainerRuntime;
  router?: ServiceRouter;
  /** Run the reconciler and the other sweeps (certificates, meter, scheduler; default true); tests call runOnce(). */
  reconcile?: boolean;
  readiness?: { timeoutMs: number; stableMs: number };
  /** A job waiting this long while this replica has a free slot makes it report not live. */
  stuckAfterMs?: number;
  /** Run the log shipper, health checks and resource sampling (default true); tests call runOnce(). */
  observe?: boolean;
  /** Run the notification relay (default true); tests call relay.runOnce() themselves. */
  relay?: boolean;
}

export type WorkerApp = ReturnType<typeof createWorkerApp>;

const WATCHDOG_INTERVAL_MS = 5000;

export function createWorkerApp(config: WorkerConfig, options: WorkerAppOptions = {}) {
  const logger = options.logger ?? pino({ level: config.LOG_LEVEL, base: { app: 'worker' } });
  const { db, vault } = openWorkerDatabase(config);
  const connection = createRedis(config.REDIS_URL, 'worker');
  const producer = createProducer(connection, config.QUEUE_PREFIX);
  const metrics = createWorkerMetrics({
    queues: () => Object.values(QUEUES).map((name) => producer.queue(name)),
  });
  registerCertificateMetrics(metrics.registry, createTlsCertificatesStore(db));
  // Each running job holds one connection for its service lock; lifecycle and reconciler need more.
  const locks = instrumentLocks(
    createAdvisoryLocks({ url: config.DATABASE_URL, max: config.WORKER_CONCURRENCY * 2 + 4 }),
    metrics,
  );
  const runtime = options.runtime ?? createDockerRuntime({ socketPath: config.DOCKER_SOCKET });
  // Caddy routes + DNS records when configured; verified custom domains are read from the database per call.
  const router =
    options.router ??
    createNetworkRouter(config, logger, createCustomDomainsStore(db), oneWriterPerZone(locks));
  const deployments = createWorkerDeploymentStore(db);
  const services = createWorkerServiceStore(db);
  // The queue prefix names the installation; Docker objects carry it so reconcilers never cross.
  const instance = config.QUEUE_PREFIX;
  const readiness = options.readiness ?? { timeoutMs: 60_000, stableMs: 1000 };
  // The release engine's settings: one source for deploy, restore and start/restart recreation.
  const release = {
    runtime,
    router,
    instance,
    readiness,
    stabilizationMs: config.RELEASE_STABILIZATION_MS,
    drainMs: config.RELEASE_DRAIN_MS,
  };
  const sourcePolicy = workerSourcePolicy(config);
  const sources = createRepositorySources(config, sourcePolicy);
  // RUNTIME=swarm: releases run as Swarm services on the manager (SWARM_DOCKER_HOST, else
  // DOCKER_SOCKET); images are pulled and built on DOCKER_SOCKET, then pushed to REGISTRY for the nodes.
  const managerSocket = config.SWARM_DOCKER_HOST.replace(/^unix:\/\//, '') || config.DOCKER_SOCKET;
  const notifications = createWorkerNotificationStore(db);
  const notify = (deploymentId: string) => {
    connection
      .publish(deploymentChannel(config.QUEUE_PREFIX, deploymentId), 'changed')
      .catch(() => undefined);
  };

  // The runtime, chosen here once from RUNTIME: nothing downstream asks which one it is.
  const { driver, registryImages, updateFollower, egressReach } = createRuntimeWiring(config, {
    release,
    managerSocket,
    services,
    locks,
    logger,
  });
  const egress = createWorkerEgress({
    config,
    runtime,
    ...(egressReach ? { reach: egressReach } : {}),
    logger,
  });
  const nodes = createNodes({
    config,
    hasNodes: config.RUNTIME === 'swarm',
    managerSocket,
    db,
    locks,
    logger,
  });
  const lifecycle = { deployments, driver };
  const processors = {
    deploy: createDeployProcessor({
      deployments,
      services,
      locks,
      logger,
      notify,
      deployTimeoutMs: config.DEPLOY_TIMEOUT_MS,
      customerShare: config.DEPLOY_CUSTOMER_CONCURRENCY,
      releasesKept: config.RELEASES_KEPT,
      ...(registryImages ? { registryImages } : {}),
      pipeline: {
        runtime,
        driver,
        sources,
        containerLimits: containerLimitPolicy(config),
        images: { policy: sourcePolicy.imagePolicy },
      },
    }),
    delete: createDeleteProcessor({
      deployments,
      services,
      locks,
      driver,
      ...(registryImages ? { registryImages } : {}),
      logger,
      purgeLogs: async (serviceId) => {
        await connection.del(serviceLogStreamKey(config.QUEUE_PREFIX, serviceId));
      },
    }),
    lifecycle: createLifecycleProcessor({ ...lifecycle, services, locks, lockWaitMs: 5000, logger }),
    ...createBackupProcessors({ config, db, locks, services, lifecycle, instance, logger }),
    'node-availability': nodes.processor,
    run: createRunProcessor({ runs: createRunsStore(db), deployments, release, driver, logger }),
    notify: notificationProcessorOf(config, notifications, sourcePolicy, logger),
  };
  const busy = new Map<string, number>();
  const workers: Worker[] = createWorkers({
    connection,
    prefix: config.QUEUE_PREFIX,
    concurrency: config.WORKER_CONCURRENCY,
    processors,
    logger,
    observer: {
      started: (queue) => {
        busy.set(queue, (busy.get(queue) ?? 0) + 1);
        metrics.jobStarted(queue);
      },
      finished: (queue, job, outcome, seconds) => {
        busy.set(queue, (busy.get(queue) ?? 1) - 1);
        metrics.jobFinished(queue, job, outcome, seconds);
      },
      stalled: (queue) => metrics.jobStalled(queue),
    },
  });
  const watchdog = createConsumerWatchdog({
    consumers: workers,
    concurrency: config.WORKER_CONCURRENCY,
    busy: (queue) => busy.get(queue) ?? 0,
    oldestWaiting: async (queue) => {
      const [oldest] = await producer
        .queue(queue as (typeof QUEUES)[keyof typeof QUEUES])
        .getJobs(['wait'], 0, 0, true);
      return oldest?.id;
    },
    stuckAfterMs: options.stuckAfterMs ?? 30_000,
    logger,
    metrics,
  });
  const reconciler = createReconciler({
    driver,
    deployments,
    services,
    producer,
    runtime,
    router,
    locks,
    instance,
    queuedGraceMs: 10_000,
    logger,
    egress,
    onSweep: recordSweeps(metrics),
  });
  const observers = createObservers({
    config,
    db,
    locks,
    observed: driver.observed,
    services,
    logger,
  });
  const relay = createNotificationRelay({
    store: notifications,
    producer,
    intervalMs: config.NOTIFY_RELAY_INTERVAL_MS,
    customerShare: config.NOTIFY_CUSTOMER_CONCURRENCY,
    logger,
  });
  const certificates = createCertificates(config, { db, locks, logger });
  const meter = createUsageMeter(config, { db, logger });
  const scheduler = schedulerOf(config, { db, producer, logger });
  let health: Awaited<ReturnType<typeof startHealthServer>> | undefined;

  let closeGraceMs = 20_000;
  // Started in this order and stopped in reverse: the health server answers before any job runs
  // and until the last one is done; the watchdog stops before the consumers it would restart.
  const parts: WorkerPart[] = [
    { name: 'secrets', start: () => startSecrets(db, vault, logger) },
    {
      name: 'egress',
      // Before any job runs: tenant code must never run without the egress policy in enforce mode.
      async start() {
        if (config.EGRESS_POLICY === 'enforce') {
          await sources.builder.prepare?.();
          assertDockerNetworkNamespace();
          await egress.ensure();
          logger.info({ denyCidrs: config.EGRESS_DENY_CIDRS }, 'egress policy installed');
        } else {
          logger.warn('EGRESS_POLICY=off: tenant containers can reach the host and 169.254.0.0/16');
        }
      },
    },
    {
      name: 'health server',
      async start() {
        health = await startHealthServer({
          host: config.WORKER_HEALTH_HOST,
          port: config.WORKER_HEALTH_PORT,
          checks: {
            postgres: async () => void (await db.$queryRaw`SELECT 1`),
            redis: async () => void (await connection.ping()),
            docker: () => runtime.ping(),
          },
          liveness: () => watchdog.liveness(),
          metrics: async () => ({
            contentType: metrics.registry.contentType,
            body: await metrics.registry.metrics(),
          }),
        });
        // The health port may be random (0): protected from git and registry targets once known.
        sourcePolicy.protectedEndpoints.push({ host: config.WORKER_HEALTH_HOST, port: health.port });
      },
      stop: async () => health?.close(),
    },
    {
      name: 'consumers',
      async start() {
        for (const worker of workers) void worker.run();
        await Promise.all(workers.map((worker) => worker.waitUntilReady()));
      },
      async stop() {
        const graceful = Promise.all(workers.map((worker) => worker.close()));
        const isClean = await Promise.race([
          graceful.then(() => true),
          new Promise<boolean>((resolve) => setTimeout(() => resolve(false), closeGraceMs).unref()),
        ]);
        if (!isClean) {
          logger.warn(
            { graceMs: closeGraceMs },
            'jobs still running at shutdown; closing anyway (they will be retried)',
          );
          await Promise.all(workers.map((worker) => worker.close(true)));
        }
      },
    },
    {
      name: 'watchdog',
      start: () => watchdog.start(WATCHDOG_INTERVAL_MS),
      stop: () => watchdog.stop(),
    },
    {
      name: 'reconciler',
      enabled: options.reconcile !== false,
      start: () => reconciler.start(config.RECONCILE_INTERVAL_MS),
      stop: () => reconciler.stop(),
    },
    ...(updateFollower
      ? [
          {
            name: 'update route follower',
            enabled: options.reconcile !== false,
            start: () => updateFollower.start(),
            stop: () => updateFollower.stop(),
          },
        ]
      : []),
    {
      name: 'certificates',
      enabled: options.reconcile !== false,
      start: () => certificates.start(),
      stop: () => certificates.stop(),
    },
    {
      name: 'usage meter',
      enabled: options.reconcile !== false,
      start: () => meter.start(),
      stop: () => meter.stop(),
    },
    {
      name: 'scheduler',
      enabled: options.reconcile !== false,
      start: () => scheduler.start(),
      stop: () => scheduler.stop(),
    },
    {
      name: 'observers',
      enabled: options.observe !== false,
      start: () => observers.start(),
      stop: () => observers.stop(),
    },
    {
      name: 'nodes',
      enabled: options.observe !== false,
      start: () => nodes.start(),
      stop: () => nodes.stop(),
    },
    {
      name: 'relay',
      enabled: options.relay !== false,
      start: () => relay.start(),
      stop: () => relay.stop(),
    },
  ];

  return {
    logger,
    reconciler,
    /** RUNTIME=swarm: routes services Swarm updates when no job follows them; started with the reconciler. */
    updateFollower,
    producer,
    metrics,
    watchdog,
    observers,
    nodes,
    relay,
    certificates,
    meter,
    scheduler,
    get healthPort(): number {
      return health?.port ?? 0;
    },

    async start(): Promise<void> {
      await startParts(parts);
    },

    /** Lets running jobs finish for up to `graceMs`; a job cut short is retried by another replica. */
    async close(graceMs = 20_000): Promise<void> {
      closeGraceMs = graceMs;
      await stopParts(parts);
      await producer.close();
      await connection.quit().catch(() => undefined);
      await locks.close();
      await db.$disconnect();
    },
  };
}
