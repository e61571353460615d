import type { WorkerConfig } from '@hostctl/config';
import type { Db } from '@hostctl/db';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { ImageBuilder } from '../adapters/image-builder.js';
import type { ContainerRuntime } from '../adapters/runtime.js';
import type { Liveness } from '../consumer-watchdog.js';
import { assertDockerNetworkNamespace } from '../egress/egress-policy.js';
import { startHealthServer } from '../health-server.js';
import type { WorkerMetrics } from '../metrics/worker-metrics.js';
import type { workerSourcePolicy } from '../sources/source-wiring.js';
import type { WorkerPart } from '../worker-parts.js';

/** Before any job runs: tenant code must never run without the egress policy in enforce mode. */
export function egressPart(options: {
  config: WorkerConfig;
  egress: { ensure(): Promise<void> };
  builder: Pick<ImageBuilder, 'prepare'>;
  logger: Logger;
}): WorkerPart {
  const { config, logger } = options;
  return {
    name: 'egress',
    async start() {
      if (config.EGRESS_POLICY === 'enforce') {
        await options.builder.prepare?.();
        assertDockerNetworkNamespace();
        await options.egress.ensure();
        logger.info({ denyCidrs: config.EGRESS_DENY_CIDRS }, 'egress policy installed');
      } else {
        logger.warn('EGRESS_POLICY=off: tenant containers can reach the host and 169.254.0.0/16');
      }
    },
  };
}

/**
 * /livez, /readyz and /metrics: started before any job runs and stopped after the last one, so
 * a supervisor sees the replica the whole time it holds work.
 */
export function healthPart(options: {
  config: WorkerConfig;
  db: Db;
  connection: Redis;
  runtime: Pick<ContainerRuntime, 'ping'>;
  liveness: () => Liveness;
  metrics: WorkerMetrics;
  sourcePolicy: ReturnType<typeof workerSourcePolicy>;
}) {
  const { config, db, connection, runtime, metrics } = options;
  let health: Awaited<ReturnType<typeof startHealthServer>> | undefined;
  const part: WorkerPart = {
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
        liveness: options.liveness,
        metrics: async () => ({
          contentType: metrics.registry.contentType,
          body: await metrics.registry.metrics(),
        }),
      });
      // The health port may be random (0): protected from git and registry targets once known.
      options.sourcePolicy.protectedEndpoints.push({ host: config.WORKER_HEALTH_HOST, port: health.port });
    },
    stop: async () => health?.close(),
  };
  return { part, port: () => health?.port ?? 0 };
}
