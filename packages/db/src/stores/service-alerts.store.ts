import type { Db } from '../client.js';
import { insertNotifications } from './notification-outbox.js';
import { METRIC_WIDTHS } from './service-metrics.store.js';

/**
 * Threshold alerts on running services (docs/notifications.md#threshold-alerts), sent through the
 * notification outbox once per streak. A row of `service_alerts` is an open streak: it is created
 * when the condition is first seen, notified once it has held long enough, and deleted when the
 * condition ends (the next streak notifies again). The notification is inserted in the same
 * transaction that marks the row notified, and the row is locked while it is, so two sweeps at
 * once (a second leader) notify once.
 */
export const ALERT_RULES = {
  /** service.memory_high: memory at or above this share of the limit… */
  memoryHighRatio: 0.9,
  /** …in this many consecutive samples (90 s at the default 30 s interval). */
  memoryHighSamples: 3,
  /** service.restart_loop: at least this many container restarts… */
  restartLoopRestarts: 3,
  /** …within this window, counted from the 5-minute buckets it touches. */
  restartLoopWindowMs: 15 * 60_000,
} as const;

export type AlertRules = typeof ALERT_RULES;

export interface MemoryReading {
  serviceId: string;
  memoryMb: number;
  /** 0: no limit, never "high". */
  memoryLimitMb: number;
}

export interface AlertRaised {
  serviceId: string;
  kind: 'memory_high' | 'restart_loop';
  message: string;
}

export function createServiceAlertsStore(db: Db) {
  return {
    /**
     * One round after a sweep: `readings` are the sweep's memory samples of running services.
     * Returns the alerts notified in this round.
     */
    async evaluate(
      readings: MemoryReading[],
      now: Date,
      rules: AlertRules = ALERT_RULES,
    ): Promise<AlertRaised[]> {
      const high = readings.filter(
        (reading) =>
          reading.memoryLimitMb > 0 && reading.memoryMb >= reading.memoryLimitMb * rules.memoryHighRatio,
      );
      const windowStart = new Date(now.getTime() - rules.restartLoopWindowMs);
      return db.$transaction(async (tx) => {
        await tx.$executeRaw`
          DELETE FROM service_alerts
          WHERE kind = 'memory_high' AND service_id <> ALL(${high.map((reading) => reading.serviceId)}::text[])`;
        if (high.length > 0)
          await tx.$executeRaw`
            INSERT INTO service_alerts (service_id, kind)
            SELECT id, 'memory_high' FROM unnest(${high.map((reading) => reading.serviceId)}::text[]) AS v(id)
            JOIN services s USING (id)
            ON CONFLICT (service_id, kind) DO UPDATE SET streak = service_alerts.streak + 1`;
        // Restarts of the buckets the window touches (a bucket is counted whole: at most 5 min early).
        const looping = await tx.$queryRaw<{ service_id: string; restarts: bigint }[]>`
          SELECT b.service_id, sum(b.restarts) AS restarts
          FROM service_metric_buckets b
          JOIN services s ON s.id = b.service_id AND s.status = 'running' AND s.deleted_at IS NULL
          WHERE b.width_s = ${METRIC_WIDTHS.fine}
            AND b.bucket_start > ${new Date(windowStart.getTime() - METRIC_WIDTHS.fine * 1000)}
            AND b.restarts > 0
          GROUP BY b.service_id HAVING sum(b.restarts) >= ${rules.restartLoopRestarts}`;
        await tx.$executeRaw`
          DELETE FROM service_alerts
          WHERE kind = 'restart_loop' AND service_id <> ALL(${looping.map((row) => row.service_id)}::text[])`;
        if (looping.length > 0)
          await tx.$executeRaw`
            INSERT INTO service_alerts (service_id, kind)
            SELECT unnest(${looping.map((row) => row.service_id)}::text[]), 'restart_loop'
            ON CONFLICT DO NOTHING`;

        const due = await tx.$queryRaw<{ service_id: string; kind: string }[]>`
          SELECT service_id, kind FROM service_alerts
          WHERE notified_at IS NULL
            AND (kind = 'restart_loop' OR streak >= ${rules.memoryHighSamples})
          ORDER BY service_id, kind
          FOR UPDATE SKIP LOCKED`;
        const raised: AlertRaised[] = [];
        for (const row of due) {
          const alert =
            row.kind === 'memory_high'
              ? memoryAlert(row.service_id, high, rules)
              : restartAlert(row.service_id, looping, rules);
          if (!alert) continue;
          await tx.serviceAlert.update({
            where: { serviceId_kind: { serviceId: row.service_id, kind: row.kind } },
            data: { notifiedAt: now },
          });
          await insertNotifications(tx, {
            event: `service.${alert.raised.kind}`,
            serviceId: row.service_id,
            alert: alert.figures,
            message: alert.raised.message,
          });
          raised.push(alert.raised);
        }
        return raised;
      });
    },

    /** The service's open streaks, for tests and operators. */
    async alertsOf(serviceId: string) {
      return db.serviceAlert.findMany({ where: { serviceId }, orderBy: { kind: 'asc' } });
    },
  };
}

export type ServiceAlertsStore = ReturnType<typeof createServiceAlertsStore>;

function memoryAlert(serviceId: string, high: MemoryReading[], rules: AlertRules) {
  const reading = high.find((item) => item.serviceId === serviceId);
  if (!reading) return undefined;
  const percent = Math.round((reading.memoryMb / reading.memoryLimitMb) * 100);
  return {
    raised: {
      serviceId,
      kind: 'memory_high' as const,
      message: `memory at ${percent}% of its limit (${reading.memoryMb} of ${reading.memoryLimitMb} MiB) for ${rules.memoryHighSamples} samples in a row; the kernel kills a process of the service when it reaches the limit`,
    },
    figures: {
      memory_mb: reading.memoryMb,
      memory_limit_mb: reading.memoryLimitMb,
      samples: rules.memoryHighSamples,
    },
  };
}

function restartAlert(
  serviceId: string,
  looping: { service_id: string; restarts: bigint }[],
  rules: AlertRules,
) {
  const row = looping.find((item) => item.service_id === serviceId);
  if (!row) return undefined;
  const minutes = rules.restartLoopWindowMs / 60_000;
  const restarts = Number(row.restarts);
  return {
    raised: {
      serviceId,
      kind: 'restart_loop' as const,
      message: `containers restarted ${restarts} times within ${minutes} minutes; its logs show why`,
    },
    figures: { restarts, window_minutes: minutes },
  };
}
