import type { Db } from '../client.js';
import { insertPlatformNotifications } from './notification-outbox.js';

/**
 * The worker's half of metering (docs/metering.md): closes hours. An hour is closed once, for
 * every customer at the same time, in one transaction that writes its usage records, one
 * `usage.period_closed` notification per customer that used something, and moves the watermark
 * past it. The watermark row is locked for that transaction (`FOR UPDATE SKIP LOCKED`), so any
 * number of workers may run the closer: one closes, the others skip, and a worker killed
 * mid-close leaves nothing behind (its transaction never committed). The records' primary key
 * (service, hour) is a second guard: nothing can count an hour twice.
 */
export const USAGE_PERIOD_MS = 60 * 60 * 1000;

export interface ClosedUsagePeriod {
  periodStart: Date;
  periodEnd: Date;
  /** Customers with usage in the hour (each got its records and a notification). */
  customers: number;
  records: number;
}

interface CustomerTotals {
  customerId: string;
  services: number;
  containerSeconds: bigint;
  memoryMbSeconds: bigint;
  millicpuSeconds: bigint;
  deploys: number;
}

export type UsageMeterStore = ReturnType<typeof createUsageMeterStore>;

export function createUsageMeterStore(db: Db, options: { platformCustomerId: string }) {
  /** Closes the hour after the watermark when it ended `delayMs` before `now`; null when none is due or another worker is closing. */
  async function closeNext(now: Date, delayMs: number): Promise<ClosedUsagePeriod | null> {
    return db.$transaction(async (tx) => {
      const [mark] = await tx.$queryRaw<{ closedThrough: Date }[]>`
        SELECT closed_through AS "closedThrough" FROM usage_watermark WHERE id = 1 FOR UPDATE SKIP LOCKED`;
      if (!mark) return null;
      const start = mark.closedThrough;
      const end = new Date(start.getTime() + USAGE_PERIOD_MS);
      if (end.getTime() + delayMs > now.getTime()) return null;
      // Each span clipped to the hour; deploys counted per service that held capacity in it (a
      // deployment makes its service `deploying`, so a service with a deploy always has a span).
      const totals = await tx.$queryRaw<CustomerTotals[]>`
        WITH spans AS (
          SELECT service_id, customer_id,
            sum(containers * seconds) AS container_seconds,
            sum(memory_mb * seconds) AS memory_mb_seconds,
            sum(millicpus * seconds) AS millicpu_seconds
          FROM (
            SELECT service_id, customer_id, containers, memory_mb, millicpus,
              extract(epoch FROM least(coalesce(ended_at, ${end}), ${end}) - greatest(started_at, ${start})) AS seconds
            FROM service_usage_intervals
            WHERE started_at < ${end} AND (ended_at IS NULL OR ended_at > ${start})
          ) clipped
          GROUP BY service_id, customer_id
        ), written AS (
          INSERT INTO usage_records (service_id, period_start, customer_id, period_end,
            container_seconds, memory_mb_seconds, millicpu_seconds, deploys)
          SELECT s.service_id, ${start}, s.customer_id, ${end},
            round(s.container_seconds)::bigint, round(s.memory_mb_seconds)::bigint,
            round(s.millicpu_seconds)::bigint,
            (SELECT count(*)::int FROM deployments d
              WHERE d.service_id = s.service_id AND d.created_at >= ${start} AND d.created_at < ${end})
          FROM spans s
          ON CONFLICT DO NOTHING
          RETURNING *
        )
        SELECT customer_id AS "customerId", count(*)::int AS services,
          sum(container_seconds)::bigint AS "containerSeconds",
          sum(memory_mb_seconds)::bigint AS "memoryMbSeconds",
          sum(millicpu_seconds)::bigint AS "millicpuSeconds",
          sum(deploys)::int AS deploys
        FROM written GROUP BY customer_id ORDER BY customer_id`;
      for (const customer of totals) {
        await insertPlatformNotifications(tx, options.platformCustomerId, {
          event: 'usage.period_closed',
          usage: {
            customer_id: customer.customerId,
            period_start: start.toISOString(),
            period_end: end.toISOString(),
            services: customer.services,
            container_seconds: Number(customer.containerSeconds),
            memory_mb_seconds: Number(customer.memoryMbSeconds),
            cpu_seconds: Number(customer.millicpuSeconds) / 1000,
            deploys: customer.deploys,
          },
          message: `usage of customer ${customer.customerId} for ${start.toISOString()} – ${end.toISOString()} is final`,
        });
      }
      await tx.$executeRaw`UPDATE usage_watermark SET closed_through = ${end} WHERE id = 1`;
      return {
        periodStart: start,
        periodEnd: end,
        customers: totals.length,
        records: totals.reduce((sum, customer) => sum + customer.services, 0),
      };
    });
  }

  return {
    closeNext,

    /** Closes every due hour, oldest first, at most `max` (a worker back after a long outage catches up over several rounds). */
    async closeDue(now: Date, delayMs: number, max: number): Promise<ClosedUsagePeriod[]> {
      const closed: ClosedUsagePeriod[] = [];
      while (closed.length < max) {
        const period = await closeNext(now, delayMs);
        if (!period) break;
        closed.push(period);
      }
      return closed;
    },
  };
}
