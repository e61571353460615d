import { HEALTH_STATUSES, type HealthStatus, type NotificationEvent } from '@hostctl/domain';
import type { Db } from '../client.js';
import { insertNotifications } from './notification-outbox.js';
import type { WorkerEvent } from './worker-services.store.js';

/**
 * What the worker observes about running services: health and resource usage, stored on the
 * service row so API reads never wait for Docker. Written with plain SQL on purpose: these are
 * periodic samples, not changes to the service, so `updated_at` (which Prisma would bump, and
 * which the list sorts on) must not move.
 */
export interface HealthTarget {
  id: string;
  healthStatus: HealthStatus;
  consecutiveFailures: number;
  /** The public endpoint from the last succeeded deployment's plan, when the service has one. */
  web: { container: string; port: number } | null;
}

export interface HealthRecord {
  status: HealthStatus;
  consecutiveFailures: number;
  checkedAt: Date;
}

/** null keeps the stored value. */
export interface UsageSample {
  id: string;
  cpuUsage: number | null;
  memoryUsageMb: number | null;
  memoryLimitMb: number | null;
  storageMb: number | null;
}

export function createWorkerTelemetryStore(db: Db) {
  return {
    /** Running services with their current health and web endpoint. */
    async listHealthTargets(): Promise<HealthTarget[]> {
      const rows = await db.$queryRaw<
        { id: string; health_status: string; health_consecutive_failures: number; web: unknown }[]
      >`
        SELECT s.id, s.health_status, s.health_consecutive_failures, d.plan -> 'web' AS web
        FROM services s
        LEFT JOIN LATERAL (
          SELECT plan FROM deployments
          WHERE service_id = s.id AND status = 'succeeded'
          ORDER BY created_at DESC LIMIT 1
        ) d ON true
        WHERE s.status = 'running' AND s.deleted_at IS NULL`;
      return rows.map((row) => ({
        id: row.id,
        healthStatus: toHealthStatus(row.health_status),
        consecutiveFailures: row.health_consecutive_failures,
        web: toWeb(row.web),
      }));
    },

    /**
     * Stores a check result (and the event, in the same transaction) only while the service is
     * still running: a stop that happened during the check wins. Returns whether it was stored.
     */
    async recordHealth(
      id: string,
      health: HealthRecord,
      event?: WorkerEvent,
      notification?: Extract<NotificationEvent, 'service.unhealthy' | 'service.recovered'>,
    ): Promise<boolean> {
      return db.$transaction(async (tx) => {
        const updated = await tx.$executeRaw`
          UPDATE services
          SET health_status = ${health.status},
              health_last_check = ${health.checkedAt},
              health_consecutive_failures = ${health.consecutiveFailures}
          WHERE id = ${id} AND status = 'running' AND deleted_at IS NULL`;
        if (updated === 0) return false;
        if (event) await tx.serviceEvent.create({ data: { serviceId: id, ...event } });
        if (notification)
          await insertNotifications(tx, {
            event: notification,
            serviceId: id,
            message: event?.message ?? notification,
          });
        return true;
      });
    },

    /** Services that are not running have no health to report: back to `unknown`. */
    async resetInactiveHealth(): Promise<number> {
      return db.$executeRaw`
        UPDATE services
        SET health_status = 'unknown', health_consecutive_failures = 0
        WHERE status <> 'running' AND deleted_at IS NULL
          AND (health_status <> 'unknown' OR health_consecutive_failures <> 0)`;
    },

    /** One statement for every sample, however many services there are. */
    async recordUsage(samples: UsageSample[]): Promise<void> {
      if (samples.length === 0) return;
      const column = (pick: (sample: UsageSample) => number | null) => samples.map(pick);
      await db.$executeRaw`
        UPDATE services AS s
        SET cpu_usage = COALESCE(v.cpu, s.cpu_usage),
            memory_usage_mb = COALESCE(v.memory, s.memory_usage_mb),
            memory_limit_mb = COALESCE(v.memory_limit, s.memory_limit_mb),
            storage_mb = COALESCE(v.storage, s.storage_mb)
        FROM unnest(
          ${samples.map((sample) => sample.id)}::text[],
          ${column((sample) => sample.cpuUsage)}::float8[],
          ${column((sample) => sample.memoryUsageMb)}::float8[],
          ${column((sample) => sample.memoryLimitMb)}::float8[],
          ${column((sample) => sample.storageMb)}::float8[]
        ) AS v(id, cpu, memory, memory_limit, storage)
        WHERE s.id = v.id AND s.deleted_at IS NULL`;
    },

    /** A service that is not running uses no CPU or memory (its volumes still take storage). */
    async clearInactiveUsage(): Promise<number> {
      return db.$executeRaw`
        UPDATE services SET cpu_usage = 0, memory_usage_mb = 0
        WHERE status <> 'running' AND deleted_at IS NULL AND (cpu_usage <> 0 OR memory_usage_mb <> 0)`;
    },
  };
}

export type WorkerTelemetryStore = ReturnType<typeof createWorkerTelemetryStore>;

function toHealthStatus(value: string): HealthStatus {
  return (HEALTH_STATUSES as readonly string[]).includes(value) ? (value as HealthStatus) : 'unknown';
}

function toWeb(value: unknown): HealthTarget['web'] {
  const web = value as { container?: unknown; port?: unknown } | null;
  return typeof web?.container === 'string' && typeof web.port === 'number'
    ? { container: web.container, port: web.port }
    : null;
}
