import { customerScope, type Principal } from '@hostctl/auth-policy';
import type { MetricResolution, ServiceMetricsStore, ServicesStore } from '@hostctl/db';
import { DomainError, validationError } from '@hostctl/domain';
import { parseTimestamp } from '../../http/input-bounds.js';
import type { MetricsQuery } from './service-metrics.schemas.js';

const DAY_MS = 86_400_000;
/** 0001-01-01T00:00:00Z: the earliest timestamp the API's date-time format takes (input-bounds.ts). */
const EARLIEST_MS = Date.parse('0001-01-01T00:00:00Z');
/**
 * The longest range per resolution: what each stored width keeps (5-minute buckets 8 days,
 * hourly ones 35), so a range never silently reaches past the history it is read from.
 */
const MAX_RANGE_MS: Record<MetricResolution, number> = {
  '5m': 8 * DAY_MS,
  '15m': 8 * DAY_MS,
  '1h': 35 * DAY_MS,
  '6h': 35 * DAY_MS,
  '1d': 35 * DAY_MS,
};

/** A service's resource history and the deployments in it (docs/health-and-resources.md#history). */
export function createServiceMetricsService(deps: {
  services: Pick<ServicesStore, 'findById'>;
  metrics: Pick<ServiceMetricsStore, 'series' | 'deploymentsIn'>;
}) {
  function rangeOf(query: MetricsQuery, now: Date) {
    // parseTimestamp reads a leap second (…:60Z, valid RFC 3339) as the second before it.
    const to = query.to ? parseTimestamp(query.to) : now;
    // A day before the earliest timestamp the API takes is year 0, which PostgreSQL refuses.
    if (!query.from && to.getTime() - DAY_MS < EARLIEST_MS)
      throw validationError(
        '/querystring/to',
        'must be at least a day after 0001-01-01T00:00:00Z when from is left out',
      );
    const from = query.from ? parseTimestamp(query.from) : new Date(to.getTime() - DAY_MS);
    const span = to.getTime() - from.getTime();
    if (span <= 0) throw validationError('/querystring/from', 'must be before to');
    const resolution: MetricResolution = query.resolution ?? (span <= 7 * DAY_MS ? '5m' : '1h');
    if (span > MAX_RANGE_MS[resolution])
      throw validationError(
        '/querystring/to',
        `at resolution ${resolution} a range spans at most ${MAX_RANGE_MS[resolution] / DAY_MS} days`,
      );
    return { from, to, resolution };
  }

  return {
    async series(principal: Principal, serviceId: string, query: MetricsQuery, now = new Date()) {
      // Scope first: another customer's service is 404 whatever the query asks.
      if (!(await deps.services.findById(customerScope(principal), serviceId)))
        throw new DomainError('not_found', `service ${serviceId} not found`);
      const { from, to, resolution } = rangeOf(query, now);
      const [points, deployments] = await Promise.all([
        deps.metrics.series(serviceId, from, to, resolution),
        deps.metrics.deploymentsIn(serviceId, from, to),
      ]);
      return {
        service_id: serviceId,
        from: from.toISOString(),
        to: to.toISOString(),
        resolution,
        points: points.map((point) => ({
          t: point.start.toISOString(),
          samples: point.samples,
          cpu_percent_avg: point.cpuAvg,
          cpu_percent_max: point.cpuMax,
          memory_mb_avg: point.memoryAvgMb,
          memory_mb_max: point.memoryMaxMb,
          memory_limit_mb: point.memoryLimitMb,
          network_rx_bytes: point.networkRxBytes,
          network_tx_bytes: point.networkTxBytes,
          restarts: point.restarts,
          oom_kills: point.oomKills,
        })),
        annotations: deployments.map((deployment) => ({
          type: 'deployment' as const,
          deployment_id: deployment.id,
          status: deployment.status,
          at: deployment.createdAt.toISOString(),
          finished_at: deployment.finishedAt?.toISOString() ?? null,
        })),
      };
    },
  };
}

export type ServiceMetricsService = ReturnType<typeof createServiceMetricsService>;
