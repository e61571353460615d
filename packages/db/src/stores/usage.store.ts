import type { Db } from '../client.js';

/** How records are added up: per hour as stored, or per UTC day or month. */
export type UsageGranularity = 'hour' | 'day' | 'month';

export interface UsageRow {
  periodStart: Date;
  serviceId: string;
  /** The service's name (a deleted service keeps its row and its name). */
  serviceName: string | null;
  containerSeconds: number;
  memoryMbSeconds: number;
  millicpuSeconds: number;
  deploys: number;
}

export interface UsageQuery {
  customerId: string;
  from: Date;
  to: Date;
  granularity: UsageGranularity;
}

type Totals = Omit<UsageRow, 'periodStart' | 'serviceId' | 'serviceName'>;

/** Sums come back as bigint: every figure of an hour fits a double exactly (< 2^53). */
interface RawFigures {
  containerSeconds: bigint;
  memoryMbSeconds: bigint;
  millicpuSeconds: bigint;
  deploys: number;
}

const figuresOf = (raw: RawFigures): Totals => ({
  containerSeconds: Number(raw.containerSeconds),
  memoryMbSeconds: Number(raw.memoryMbSeconds),
  millicpuSeconds: Number(raw.millicpuSeconds),
  deploys: Number(raw.deploys),
});

/**
 * The API's half of metering (docs/metering.md#api): a customer's closed hours, added up per
 * service and period. Only closed hours have records; `closedThrough` says how far they go.
 */
export function createUsageStore(db: Db) {
  return {
    async closedThrough(): Promise<Date | null> {
      const mark = await db.usageWatermark.findUnique({ where: { id: 1 } });
      return mark?.closedThrough ?? null;
    },

    /** Rows ordered by period then service; `limit`/`offset` page them, `total` counts them all. */
    async report(
      query: UsageQuery,
      page: { limit: number; offset: number },
    ): Promise<{ rows: UsageRow[]; total: number; totals: Totals }> {
      const { customerId, from, to, granularity } = query;
      const [rows, [summary]] = await Promise.all([
        db.$queryRaw<(RawFigures & Pick<UsageRow, 'periodStart' | 'serviceId' | 'serviceName'>)[]>`
          SELECT date_trunc(${granularity}, r.period_start, 'UTC') AS "periodStart",
            r.service_id AS "serviceId", s.name AS "serviceName",
            sum(r.container_seconds)::bigint AS "containerSeconds",
            sum(r.memory_mb_seconds)::bigint AS "memoryMbSeconds",
            sum(r.millicpu_seconds)::bigint AS "millicpuSeconds",
            sum(r.deploys)::int AS deploys
          FROM usage_records r LEFT JOIN services s ON s.id = r.service_id
          WHERE r.customer_id = ${customerId} AND r.period_start >= ${from} AND r.period_start < ${to}
          GROUP BY 1, 2, 3
          ORDER BY 1, 2
          LIMIT ${page.limit} OFFSET ${page.offset}`,
        db.$queryRaw<(RawFigures & { total: number })[]>`
          SELECT count(DISTINCT (date_trunc(${granularity}, period_start, 'UTC'), service_id))::int AS total,
            coalesce(sum(container_seconds), 0)::bigint AS "containerSeconds",
            coalesce(sum(memory_mb_seconds), 0)::bigint AS "memoryMbSeconds",
            coalesce(sum(millicpu_seconds), 0)::bigint AS "millicpuSeconds",
            coalesce(sum(deploys), 0)::int AS deploys
          FROM usage_records
          WHERE customer_id = ${customerId} AND period_start >= ${from} AND period_start < ${to}`,
      ]);
      return {
        rows: rows.map((row) => ({
          periodStart: row.periodStart,
          serviceId: row.serviceId,
          serviceName: row.serviceName,
          ...figuresOf(row),
        })),
        // An aggregate without GROUP BY always answers one row.
        total: summary?.total ?? 0,
        totals: summary
          ? figuresOf(summary)
          : figuresOf({ containerSeconds: 0n, memoryMbSeconds: 0n, millicpuSeconds: 0n, deploys: 0 }),
      };
    },
  };
}

export type UsageStore = ReturnType<typeof createUsageStore>;
