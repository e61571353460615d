import { OWNER_LABEL, SERVICE_LABEL } from '@hostctl/domain';
import type { UsageSample, WorkerServiceStore, WorkerTelemetryStore } from '@hostctl/db';
import type { Logger } from 'pino';
import type { ContainerRuntime } from '../adapters/runtime.js';
import type { ContainerTelemetry, ContainerUsage, DiskUsage } from '../adapters/telemetry.js';
import type { Leadership } from '../health/leadership.js';
import { createPeriodic, forEachBounded } from '../health/periodic.js';

/**
 * Samples resource usage of running services on an interval (leader replica only) and stores it
 * on the service rows, so API list and detail never wait for Docker:
 *
 * - cpu_usage: percent of one CPU, summed over the service's containers (`docker stats` math);
 * - memory_usage_mb: working set (usage minus reclaimable cache), summed;
 * - memory_limit_mb: the sum of the containers' limits when every container has one, else the
 *   limit configured at deploy time is kept;
 * - storage_mb: sizes of the service's volumes plus its containers' writable layers
 *   (`docker system df`), also for services that are not running (their volumes still exist).
 *
 * A one-shot stats read takes about a second (Docker waits for a second reading), so containers
 * are sampled concurrently with a bound.
 */
export interface ResourceSamplerDeps {
  store: Pick<WorkerTelemetryStore, 'recordUsage' | 'clearInactiveUsage'>;
  services: Pick<WorkerServiceStore, 'listRunningIds'>;
  runtime: Pick<ContainerRuntime, 'listContainers'>;
  telemetry: Pick<ContainerTelemetry, 'sampleUsage' | 'diskUsage'>;
  leadership: Leadership;
  intervalMs: number;
  logger: Logger;
  concurrency?: number;
}

const MB = 1024 * 1024;

export function createResourceSampler(deps: ResourceSamplerDeps) {
  const runOnce = async (): Promise<UsageSample[] | null> => {
    if (!(await deps.leadership.isLeader())) return null;
    const running = new Set(await deps.services.listRunningIds());
    const containers = (await deps.runtime.listContainers({ [OWNER_LABEL]: 'true' })).filter(
      (container) => container.state === 'running' && running.has(container.labels[SERVICE_LABEL] ?? ''),
    );
    const usage = new Map<string, ContainerUsage[]>();
    await forEachBounded(containers, deps.concurrency ?? 8, async (container) => {
      const sample = await deps.telemetry.sampleUsage(container.id).catch(() => null);
      const serviceId = container.labels[SERVICE_LABEL] ?? '';
      if (sample) usage.set(serviceId, [...(usage.get(serviceId) ?? []), sample]);
    });
    const storage = storageByService(await deps.telemetry.diskUsage());

    const samples: UsageSample[] = [];
    for (const serviceId of running) {
      const parts = usage.get(serviceId) ?? [];
      const isLimited = parts.length > 0 && parts.every((part) => Number.isFinite(part.memoryLimitBytes));
      samples.push({
        id: serviceId,
        cpuUsage: round(parts.reduce((sum, part) => sum + part.cpuPercent, 0)),
        memoryUsageMb: round(parts.reduce((sum, part) => sum + part.memoryBytes, 0) / MB),
        memoryLimitMb: isLimited
          ? round(parts.reduce((sum, part) => sum + part.memoryLimitBytes, 0) / MB)
          : null,
        storageMb: round((storage.get(serviceId) ?? 0) / MB),
      });
    }
    for (const [serviceId, bytes] of storage) {
      if (!running.has(serviceId))
        samples.push({
          id: serviceId,
          cpuUsage: null,
          memoryUsageMb: null,
          memoryLimitMb: null,
          storageMb: round(bytes / MB),
        });
    }
    await deps.store.clearInactiveUsage();
    await deps.store.recordUsage(samples);
    return samples;
  };

  const periodic = createPeriodic('resources', deps.intervalMs, runOnce, deps.logger);
  return { runOnce, start: periodic.start, stop: periodic.stop };
}

export type ResourceSampler = ReturnType<typeof createResourceSampler>;

function storageByService(disk: DiskUsage): Map<string, number> {
  const bytes = new Map<string, number>();
  for (const object of [...disk.volumes, ...disk.containers]) {
    const serviceId = object.labels[SERVICE_LABEL];
    if (object.labels[OWNER_LABEL] !== 'true' || !serviceId) continue;
    bytes.set(serviceId, (bytes.get(serviceId) ?? 0) + object.sizeBytes);
  }
  return bytes;
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}
