import type { Db } from '../client.js';

/**
 * Resource history of services (docs/health-and-resources.md#history). Every sweep of the resource
 * sampler merges its samples into two buckets per service: a 5-minute one (kept 8 days: any 7-day
 * window at full detail) and an hourly one (kept 35 days). A bucket holds sums, maxima and the
 * sample count, never averages, so buckets merge exactly into any coarser resolution.
 *
 * Idempotent per (service, bucket): a bucket remembers the sampling slot of the last sample it
 * merged and ignores a sample of the same or an older slot, so a retried statement, a second
 * leader sampling the same slot or a restarted sampler never count a sample twice.
 */
export const METRIC_WIDTHS = { fine: 300, coarse: 3600 } as const;
/** How long each width is kept (ms). 8 days: a 7-day window from any moment, plus a margin. */
export const METRIC_RETENTION_MS = { fine: 8 * 86_400_000, coarse: 35 * 86_400_000 } as const;

export interface MetricSample {
  serviceId: string;
  cpuPercent: number;
  memoryMb: number;
  /** 0 when the service has no limit. */
  memoryLimitMb: number;
  /** Bytes received/sent since the previous sample (counter deltas). */
  networkRxBytes: number;
  networkTxBytes: number;
  /** Container restarts and OOM kills seen since the previous sample. */
  restarts: number;
  oomKills: number;
}

/** Resolutions the API offers: each is read from the stored width that is at most its size. */
export const METRIC_RESOLUTIONS = { '5m': 300, '15m': 900, '1h': 3600, '6h': 21_600, '1d': 86_400 } as const;
export type MetricResolution = keyof typeof METRIC_RESOLUTIONS;

export interface MetricPoint {
  start: Date;
  samples: number;
  cpuAvg: number;
  cpuMax: number;
  memoryAvgMb: number;
  memoryMaxMb: number;
  memoryLimitMb: number;
  networkRxBytes: number;
  networkTxBytes: number;
  restarts: number;
  oomKills: number;
}

export interface DeploymentMark {
  id: string;
  status: string;
  createdAt: Date;
  finishedAt: Date | null;
}

interface RawPoint {
  start: Date;
  samples: bigint;
  cpu_sum: number;
  cpu_max: number;
  memory_sum: number;
  memory_max: number;
  memory_limit: number;
  rx: bigint;
  tx: bigint;
  restarts: bigint;
  oom_kills: bigint;
}

const round2 = (value: number) => Math.round(value * 100) / 100;

export function createServiceMetricsStore(db: Db) {
  return {
    /**
     * One statement for every sample of a sweep, both widths at once. `sampledAt` is the start of
     * the sweep's sampling slot (the sampler's interval), which is what makes a repeat a no-op.
     */
    async recordSamples(sampledAt: Date, samples: MetricSample[]): Promise<number> {
      if (samples.length === 0) return 0;
      const pick = <T>(read: (sample: MetricSample) => T) => samples.map(read);
      return db.$executeRaw`
        INSERT INTO service_metric_buckets AS b (
          service_id, width_s, bucket_start, samples, cpu_sum, cpu_max, memory_sum_mb, memory_max_mb,
          memory_limit_mb, network_rx_bytes, network_tx_bytes, restarts, oom_kills, last_sample_at)
        SELECT v.id, w.width, date_bin(make_interval(secs => w.width), ${sampledAt}::timestamptz,
                 TIMESTAMPTZ '1970-01-01 00:00:00+00'),
               1, v.cpu, v.cpu, v.memory, v.memory, v.memory_limit, v.rx, v.tx, v.restarts, v.oom_kills,
               ${sampledAt}::timestamptz
        FROM unnest(
          ${pick((sample) => sample.serviceId)}::text[],
          ${pick((sample) => sample.cpuPercent)}::float8[],
          ${pick((sample) => sample.memoryMb)}::float8[],
          ${pick((sample) => sample.memoryLimitMb)}::float8[],
          ${pick((sample) => Math.max(0, Math.round(sample.networkRxBytes)))}::int8[],
          ${pick((sample) => Math.max(0, Math.round(sample.networkTxBytes)))}::int8[],
          ${pick((sample) => sample.restarts)}::int4[],
          ${pick((sample) => sample.oomKills)}::int4[]
        ) AS v(id, cpu, memory, memory_limit, rx, tx, restarts, oom_kills)
        CROSS JOIN (VALUES (${METRIC_WIDTHS.fine}::int), (${METRIC_WIDTHS.coarse}::int)) AS w(width)
        -- A service deleted (purged) since the sweep listed it has nothing to keep history for.
        JOIN services s ON s.id = v.id
        ON CONFLICT (service_id, width_s, bucket_start) DO UPDATE SET
          samples = b.samples + 1,
          cpu_sum = b.cpu_sum + EXCLUDED.cpu_sum,
          cpu_max = GREATEST(b.cpu_max, EXCLUDED.cpu_max),
          memory_sum_mb = b.memory_sum_mb + EXCLUDED.memory_sum_mb,
          memory_max_mb = GREATEST(b.memory_max_mb, EXCLUDED.memory_max_mb),
          memory_limit_mb = GREATEST(b.memory_limit_mb, EXCLUDED.memory_limit_mb),
          network_rx_bytes = b.network_rx_bytes + EXCLUDED.network_rx_bytes,
          network_tx_bytes = b.network_tx_bytes + EXCLUDED.network_tx_bytes,
          restarts = b.restarts + EXCLUDED.restarts,
          oom_kills = b.oom_kills + EXCLUDED.oom_kills,
          last_sample_at = EXCLUDED.last_sample_at
        WHERE b.last_sample_at < EXCLUDED.last_sample_at`;
    },

    /**
     * Deletes buckets past their retention, at most `batch` rows per width per call, so one
     * round never holds locks on a large table for long; returns how many went (call again while
     * it returns `batch` or more).
     */
    async prune(now: Date, batch = 5000): Promise<number> {
      let removed = 0;
      for (const [width, keepMs] of [
        [METRIC_WIDTHS.fine, METRIC_RETENTION_MS.fine],
        [METRIC_WIDTHS.coarse, METRIC_RETENTION_MS.coarse],
      ] as const) {
        const cutoff = new Date(now.getTime() - keepMs);
        removed += await db.$executeRaw`
          DELETE FROM service_metric_buckets WHERE ctid = ANY (ARRAY(
            SELECT ctid FROM service_metric_buckets
            WHERE width_s = ${width} AND bucket_start < ${cutoff}
            LIMIT ${batch}))`;
      }
      return removed;
    },

    /**
     * The service's points in [from, to), each `resolution` wide (aligned to the Unix epoch, UTC),
     * merged from the finest stored width that divides it; buckets without samples are absent.
     */
    async series(
      serviceId: string,
      from: Date,
      to: Date,
      resolution: MetricResolution,
    ): Promise<MetricPoint[]> {
      const seconds = METRIC_RESOLUTIONS[resolution];
      const width = seconds % METRIC_WIDTHS.coarse === 0 ? METRIC_WIDTHS.coarse : METRIC_WIDTHS.fine;
      const rows = await db.$queryRaw<RawPoint[]>`
        SELECT date_bin(make_interval(secs => ${seconds}), bucket_start, TIMESTAMPTZ '1970-01-01 00:00:00+00') AS start,
               sum(samples) AS samples, sum(cpu_sum) AS cpu_sum, max(cpu_max) AS cpu_max,
               sum(memory_sum_mb) AS memory_sum, max(memory_max_mb) AS memory_max,
               max(memory_limit_mb) AS memory_limit, sum(network_rx_bytes) AS rx, sum(network_tx_bytes) AS tx,
               sum(restarts) AS restarts, sum(oom_kills) AS oom_kills
        FROM service_metric_buckets
        WHERE service_id = ${serviceId} AND width_s = ${width}
          AND bucket_start >= ${from} AND bucket_start < ${to}
        GROUP BY 1 ORDER BY 1`;
      return rows.map((row) => {
        const samples = Number(row.samples);
        return {
          start: row.start,
          samples,
          cpuAvg: round2(row.cpu_sum / samples),
          cpuMax: round2(row.cpu_max),
          memoryAvgMb: round2(row.memory_sum / samples),
          memoryMaxMb: round2(row.memory_max),
          memoryLimitMb: round2(row.memory_limit),
          networkRxBytes: Number(row.rx),
          networkTxBytes: Number(row.tx),
          restarts: Number(row.restarts),
          oomKills: Number(row.oom_kills),
        };
      });
    },

    /**
     * The latest sample of every running service with the restarts of its last hour of buckets:
     * what the worker's /metrics exports for an operator's Prometheus (docs/operations.md).
     */
    async latestOfRunning(): Promise<
      {
        id: string;
        name: string;
        customerId: string;
        cpu: number;
        memoryMb: number;
        memoryLimitMb: number;
        restartsLastHour: number;
      }[]
    > {
      const rows = await db.$queryRaw<
        {
          id: string;
          name: string;
          customer_id: string;
          cpu: number;
          memory: number;
          memory_limit: number;
          restarts: bigint;
        }[]
      >`
        SELECT s.id, s.name, s.customer_id, s.cpu_usage AS cpu, s.memory_usage_mb AS memory,
               s.memory_limit_mb AS memory_limit, coalesce(r.restarts, 0) AS restarts
        FROM services s
        LEFT JOIN LATERAL (
          SELECT sum(restarts) AS restarts FROM service_metric_buckets
          WHERE service_id = s.id AND width_s = ${METRIC_WIDTHS.fine} AND bucket_start > now() - interval '1 hour'
        ) r ON true
        WHERE s.status = 'running' AND s.deleted_at IS NULL
        ORDER BY s.id`;
      return rows.map((row) => ({
        id: row.id,
        name: row.name,
        customerId: row.customer_id,
        cpu: row.cpu,
        memoryMb: row.memory,
        memoryLimitMb: row.memory_limit,
        restartsLastHour: Number(row.restarts),
      }));
    },

    /** Deployments of the service created in [from, to), oldest first: the chart's annotations. */
    async deploymentsIn(serviceId: string, from: Date, to: Date, limit = 200): Promise<DeploymentMark[]> {
      return db.deployment.findMany({
        where: { serviceId, createdAt: { gte: from, lt: to } },
        select: { id: true, status: true, createdAt: true, finishedAt: true },
        orderBy: { createdAt: 'asc' },
        take: limit,
      });
    },
  };
}

export type ServiceMetricsStore = ReturnType<typeof createServiceMetricsStore>;
