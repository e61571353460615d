import { createServiceMetricsStore } from '@hostctl/db';
import { Registry } from 'prom-client';
import { afterAll, describe, expect, it } from 'vitest';
import {
  createComposeService,
  createTestDb,
  deleteServiceRows,
  type CreatedService,
} from '../testing/fixtures.js';
import { registerServiceUsageMetrics } from './service-usage-metrics.js';

// An operator who runs Prometheus scrapes each running service's latest sample from any worker's
// /metrics (docs/health-and-resources.md#prometheus), and its restarts of the last hour.
const db = createTestDb();
const created: CreatedService[] = [];
afterAll(async () => {
  await deleteServiceRows(db, created);
  await db.$disconnect();
});

describe("running services' resources in the worker's metrics", () => {
  it('exports CPU, memory, limit and recent restarts of running services only', async () => {
    const compose = 'services:\n  app:\n    image: local/busybox:1\n';
    const running = await createComposeService(db, { compose });
    const stopped = await createComposeService(db, { compose });
    created.push(running, stopped);
    await db.service.update({
      where: { id: running.serviceId },
      data: { status: 'running', cpuUsage: 12.5, memoryUsageMb: 64, memoryLimitMb: 256 },
    });
    await db.service.update({ where: { id: stopped.serviceId }, data: { status: 'stopped' } });
    const store = createServiceMetricsStore(db);
    const sample = {
      cpuPercent: 1,
      memoryMb: 1,
      memoryLimitMb: 256,
      networkRxBytes: 0,
      networkTxBytes: 0,
      oomKills: 0,
    };
    await store.recordSamples(new Date(Date.now() - 10 * 60_000), [
      { ...sample, serviceId: running.serviceId, restarts: 2 },
    ]);
    await store.recordSamples(new Date(Date.now() - 3 * 3_600_000), [
      { ...sample, serviceId: running.serviceId, restarts: 9 },
    ]);

    const registry = new Registry();
    registerServiceUsageMetrics(registry, store);
    const text = await registry.metrics();
    const value = (metric: string, serviceId: string) =>
      text
        .split('\n')
        .find((line) => line.startsWith(`${metric}{service_id="${serviceId}"`))
        ?.split(' ')
        .at(-1);
    expect(value('hostctl_service_cpu_percent', running.serviceId)).toBe('12.5');
    expect(value('hostctl_service_memory_bytes', running.serviceId)).toBe(String(64 * 1024 * 1024));
    expect(value('hostctl_service_memory_limit_bytes', running.serviceId)).toBe(String(256 * 1024 * 1024));
    // The restarts of 3 hours ago are out of the hour.
    expect(value('hostctl_service_restarts_last_hour', running.serviceId)).toBe('2');
    expect(text).not.toContain(stopped.serviceId);
  });
});
