import type { WorkerConfig } from '@hostctl/config';
import {
  createAdvisoryLocks,
  createWorkerDeploymentStore,
  createWorkerNotificationStore,
  createWorkerServiceStore,
  createCustomDomainsStore,
  createServiceMetricsStore,
  createBackupMetricsStore,
  createTlsCertificatesStore,
} from '@hostctl/db';
import { QUEUES, createProducer, createRedis, deploymentChannel } from '@hostctl/queue';
import { pino, type Logger } from 'pino';
import { createDockerRuntime } from './adapters/docker-runtime.js';
import { createRuntimeWiring } from './runtime/runtime-wiring.js';
import type { ServiceRouter } from './adapters/router.js';
import type { ContainerRuntime } from './adapters/runtime.js';
import { createObservers } from './health/observers.js';
import { createNodes } from './nodes/node-wiring.js';
import { registerBackupMetrics } from './metrics/backup-metrics.js';
import { registerCertificateMetrics } from './metrics/certificate-metrics.js';
import { registerServiceUsageMetrics } from './metrics/service-usage-metrics.js';
import { instrumentLocks } from './metrics/instrumented-locks.js';
import { recordSweeps } from './metrics/sweep-metrics.js';
import { createWorkerMetrics } from './metrics/worker-metrics.js';
import { createNetworkRouter } from './network/network-wiring.js';
import { oneWriterPerZone } from './network/zone-writes.js';
import { createNotificationRelay } from './notifications/notification-relay.js';
import { schedulerOf } from './schedules/scheduler-wiring.js';
import { createReconciler } from './reconciler.js';
import { createUsageMeter } from './metering/usage-meter.js';
import { createQuotaWatch } from './quotas/quota-watch.js';
import { createCertificates } from './tls/tls-wiring.js';
import { createRepositorySources, workerSourcePolicy } from './sources/source-wiring.js';
import { startParts, stopParts, type WorkerPart } from './worker-parts.js';
import { openWorkerDatabase, startSecrets } from './secrets-startup.js';
import { createWorkerEgress } from './egress/worker-egress.js';
import { createConsumers } from './wiring/consumer-wiring.js';
import { egressPart, healthPart } from './wiring/guard-parts.js';
import { createProcessors } from './wiring/processor-wiring.js';

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

export function createWorkerApp(config: WorkerConfig, options: WorkerAppOptions = {}) {
  const logger = options.logger ?? pino({ level: config.LOG_LEVEL, base: { app: 'worker' } });
  const { db, vault } = openWorkerDatabase(config);
  const connection = createRedis(config.REDIS_URL, 'worker');
  const producer = createProducer(connection, config.QUEUE_PREFIX);
  const metrics = createWorkerMetrics({
    queues: () => Object.values(QUEUES).map((name) => producer.queue(name)),
  });
  registerCertificateMetrics(metrics.registry, createTlsCertificatesStore(db));
  registerServiceUsageMetrics(metrics.registry, createServiceMetricsStore(db));
  registerBackupMetrics(metrics.registry, createBackupMetricsStore(db));
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
    evidence: {
      stabilizationMinMs: config.RELEASE_STABILIZATION_MIN_MS,
      drainMinMs: config.RELEASE_DRAIN_MIN_MS,
      healthPasses: config.RELEASE_HEALTH_PASSES,
    },
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
  const runtimeWiring = createRuntimeWiring(config, { release, managerSocket, services, locks, logger });
  const { driver, updateFollower, egressReach } = runtimeWiring;
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
  const processors = createProcessors({
    config,
    db,
    connection,
    locks,
    logger,
    runtime,
    release,
    runtimeWiring,
    deployments,
    services,
    notifications,
    sourcePolicy,
    sources,
    nodes,
    notify,
    enqueueDeploy: async (deploymentId) => void (await producer.enqueue('deploy', { deploymentId })),
  });
  let closeGraceMs = 20_000;
  const consumers = createConsumers({
    config,
    connection,
    producer,
    processors,
    metrics,
    logger,
    stuckAfterMs: options.stuckAfterMs ?? 30_000,
    graceMs: () => closeGraceMs,
  });
  const { watchdog } = consumers;
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
  const quotaWatch = createQuotaWatch(config, { db, logger });
  const scheduler = schedulerOf(config, { db, producer, logger });
  const health = healthPart({
    config,
    db,
    connection,
    runtime,
    liveness: () => watchdog.liveness(),
    metrics,
    sourcePolicy,
  });

  // Started in this order and stopped in reverse: the health server answers before any job runs
  // and until the last one is done; the watchdog stops before the consumers it would restart.
  const parts: WorkerPart[] = [
    { name: 'secrets', start: () => startSecrets(db, vault, logger) },
    egressPart({ config, egress, builder: sources.builder, logger }),
    health.part,
    ...consumers.parts,
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
      name: 'quota watch',
      enabled: options.reconcile !== false,
      start: () => quotaWatch.start(),
      stop: () => quotaWatch.stop(),
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
    quotaWatch,
    scheduler,
    get healthPort(): number {
      return health.port();
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
