/** The CPU counters of one `docker stats` answer that a percentage is computed from. */
export interface CpuCounters {
  cpu_stats?: {
    cpu_usage?: { total_usage?: number; percpu_usage?: number[] };
    system_cpu_usage?: number;
    online_cpus?: number;
  };
  precpu_stats?: { cpu_usage?: { total_usage?: number }; system_cpu_usage?: number };
}

interface Reading {
  total: number;
  system: number;
  at: number;
}

/** A container not read for this long is gone or no longer sampled: its reading is dropped. */
const FORGET_AFTER_MS = 10 * 60_000;

/**
 * CPU use between two one-shot `docker stats` reads of the same container. A one-shot read
 * (`one-shot=true`) answers at the engine's next collection instead of waiting for a second
 * reading a second later, so it carries no previous counters: the previous read's are kept here,
 * and a container's figure is its average since the sampler last read it (the whole interval,
 * not one second of it). The first read of a container has nothing before it and counts 0
 * unless the engine sent previous counters itself.
 */
export function createCpuReadings(now: () => number = Date.now) {
  const readings = new Map<string, Reading>();
  let prunedAt = now();

  const forgetStale = (at: number) => {
    if (at - prunedAt < FORGET_AFTER_MS) return;
    prunedAt = at;
    for (const [id, reading] of readings) if (at - reading.at > FORGET_AFTER_MS) readings.delete(id);
  };

  return {
    /** Percent of one CPU (200 = two full CPUs) since the container's previous reading. */
    percentSince(containerId: string, stats: CpuCounters): number {
      const at = now();
      const cpu = stats.cpu_stats;
      const current = { total: cpu?.cpu_usage?.total_usage ?? 0, system: cpu?.system_cpu_usage ?? 0, at };
      const sent = stats.precpu_stats;
      const before =
        readings.get(containerId) ??
        (sent?.system_cpu_usage
          ? { total: sent.cpu_usage?.total_usage ?? 0, system: sent.system_cpu_usage, at }
          : undefined);
      readings.set(containerId, current);
      forgetStale(at);
      if (!before) return 0;
      const cpuDelta = current.total - before.total;
      const systemDelta = current.system - before.system;
      const cpus = cpu?.online_cpus || cpu?.cpu_usage?.percpu_usage?.length || 1;
      // A restarted container starts its counters again: a negative delta counts nothing.
      return cpuDelta > 0 && systemDelta > 0 ? (cpuDelta / systemDelta) * cpus * 100 : 0;
    },
    /** How many containers have a reading kept (tests). */
    size: () => readings.size,
  };
}
