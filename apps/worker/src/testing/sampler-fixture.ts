import {
  createAdvisoryLocks,
  createServiceAlertsStore,
  createServiceMetricsStore,
  createWorkerServiceStore,
  createWorkerTelemetryStore,
} from '@hostctl/db';
import { createDockerRuntime } from '../adapters/docker-runtime.js';
import { createDockerTelemetry } from '../adapters/docker-telemetry.js';
import { createLeadership } from '../health/leadership.js';
import { createResourceSampler } from '../resources/resource-sampler.js';
import { createTestDb, silentLogger, uniquePrefix } from './fixtures.js';
import { TEST_DATABASE_URL } from './test-env.js';

/**
 * The resource sampler on the real engine with its real stores, as the observers' leader runs it;
 * `close` releases the leadership and the connections (the caller removes what it created first).
 */
export function samplerOnRealEngine(name: string, intervalMs: number) {
  const prefix = uniquePrefix(name);
  const db = createTestDb();
  const locks = createAdvisoryLocks({ url: TEST_DATABASE_URL, max: 4 });
  const socketPath = '/var/run/docker.sock';
  const runtime = createDockerRuntime({ socketPath });
  const leadership = createLeadership(locks, `hostctl:observers:${prefix}`);
  const history = createServiceMetricsStore(db);
  const sampler = createResourceSampler({
    store: createWorkerTelemetryStore(db),
    history,
    alerts: createServiceAlertsStore(db),
    services: createWorkerServiceStore(db),
    runtime,
    telemetry: createDockerTelemetry({ socketPath }),
    leadership,
    intervalMs,
    logger: silentLogger,
  });
  return {
    prefix,
    db,
    runtime,
    history,
    sampler,
    close: async () => {
      await leadership.release();
      await locks.close();
      await db.$disconnect();
    },
  };
}
