import { OWNER_LABEL, SERVICE_LABEL } from '@hostctl/domain';
import type {
  MetricSample,
  ServiceAlertsStore,
  ServiceMetricsStore,
  UsageSample,
  WorkerServiceStore,
  WorkerTelemetryStore,
} from '@hostctl/db';
import type { Logger } from 'pino';
import type { ContainerRuntime } from '../adapters/runtime.js';
import type { ContainerTelemetry, ContainerUsage, DiskUsage } from '../adapters/telemetry.js';
import type { Leadership } from '../health/leadership.js';
import { createPeriodic, forEachBounded } from '../health/periodic.js';
import { createCounterDeltas, type ContainerCounters, type CounterDeltas } from './counter-deltas.js';

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
 * A one-shot stats read is answered at the engine's next collection (within a second, waiting,
 * not working), so containers are read 32 at a time: a sweep of 500 stays well inside its interval
 * (docs/performance.md#density-500-services-on-one-host).
 *
 * Each sweep also adds the running services' samples to their history (one statement,
 * service-metrics.store.ts) with the network bytes and restarts since the previous sweep, then
 * lets the threshold alerts look at it (service-alerts.store.ts).
 */
export interface ResourceSamplerDeps {
  store: Pick<WorkerTelemetryStore, 'recordUsage' | 'clearInactiveUsage'>;
  services: Pick<WorkerServiceStore, 'listRunningIds'>;
  runtime: Pick<ContainerRuntime, 'listContainers' | 'inspectContainer'>;
  history: Pick<ServiceMetricsStore, 'recordSamples'>;
  alerts: Pick<ServiceAlertsStore, 'evaluate'>;
  telemetry: Pick<ContainerTelemetry, 'sampleUsage' | 'diskUsage'>;
  leadership: Leadership;
  intervalMs: number;
  logger: Logger;
  concurrency?: number;
}

const MB = 1024 * 1024;

export function createResourceSampler(deps: ResourceSamplerDeps) {
  const counters = createCounterDeltas();

  const runOnce = async (): Promise<UsageSample[] | null> => {
    if (!(await deps.leadership.isLeader())) return null;
    // The sweep's sampling slot: a second leader sampling the same slot adds nothing to history.
    const sampledAt = new Date(Math.floor(Date.now() / deps.intervalMs) * deps.intervalMs);
    const running = new Set(await deps.services.listRunningIds());
    // Restarting containers too: they are what restarts are counted on.
    const containers = (await deps.runtime.listContainers({ [OWNER_LABEL]: 'true' })).filter(
      (container) =>
        (container.state === 'running' || container.state === 'restarting') &&
        running.has(container.labels[SERVICE_LABEL] ?? ''),
    );
    const usage = new Map<string, ContainerUsage[]>();
    const readings = new Map<string, ContainerCounters>();
    const oomKilled = new Set<string>();
    await forEachBounded(containers, deps.concurrency ?? 32, async (container) => {
      const serviceId = container.labels[SERVICE_LABEL] ?? '';
      const [sample, state] = await Promise.all([
        container.state === 'running' ? deps.telemetry.sampleUsage(container.id).catch(() => null) : null,
        deps.runtime.inspectContainer(container.id).catch(() => null),
      ]);
      if (sample && container.state === 'running')
        usage.set(serviceId, [...(usage.get(serviceId) ?? []), sample]);
      if (state?.oomKilled) oomKilled.add(container.id);
      readings.set(container.id, {
        networkRxBytes: sample?.networkRxBytes,
        networkTxBytes: sample?.networkTxBytes,
        restartCount: state?.restartCount,
      });
    });
    const deltas = counters.advance(readings);
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
    const history = historyOf(samples, running, containers, deltas, oomKilled);
    await deps.history.recordSamples(sampledAt, history);
    const raised = await deps.alerts.evaluate(history, new Date());
    for (const alert of raised)
      deps.logger.warn({ serviceId: alert.serviceId, alert: alert.kind }, alert.message);
    return samples;
  };

  const periodic = createPeriodic('resources', deps.intervalMs, runOnce, deps.logger);
  return { runOnce, start: periodic.start, stop: periodic.stop };
}

export type ResourceSampler = ReturnType<typeof createResourceSampler>;

/**
 * History samples of the running services: usage as stored on the row, plus what the counters
 * say happened since the previous sweep. A restart whose container's last exit was an OOM kill
 * counts one OOM kill (a lower bound: the engine keeps only the last exit's reason).
 */
function historyOf(
  samples: UsageSample[],
  running: Set<string>,
  containers: { id: string; labels: Record<string, string> }[],
  deltas: Map<string, CounterDeltas>,
  oomKilled: Set<string>,
): MetricSample[] {
  const events = new Map<string, { rx: number; tx: number; restarts: number; oomKills: number }>();
  for (const container of containers) {
    const serviceId = container.labels[SERVICE_LABEL] ?? '';
    const delta = deltas.get(container.id);
    if (!delta) continue;
    const total = events.get(serviceId) ?? { rx: 0, tx: 0, restarts: 0, oomKills: 0 };
    total.rx += delta.networkRxBytes;
    total.tx += delta.networkTxBytes;
    total.restarts += delta.restarts;
    if (delta.restarts > 0 && oomKilled.has(container.id)) total.oomKills += 1;
    events.set(serviceId, total);
  }
  return samples
    .filter((sample) => running.has(sample.id))
    .map((sample) => {
      const seen = events.get(sample.id);
      return {
        serviceId: sample.id,
        cpuPercent: sample.cpuUsage ?? 0,
        memoryMb: sample.memoryUsageMb ?? 0,
        memoryLimitMb: sample.memoryLimitMb ?? 0,
        networkRxBytes: seen?.rx ?? 0,
        networkTxBytes: seen?.tx ?? 0,
        restarts: seen?.restarts ?? 0,
        oomKills: seen?.oomKills ?? 0,
      };
    });
}

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
