import type { CustomerScope } from '@hostctl/auth-policy';
import type { Db } from '../client.js';
import type { ServiceSchedule } from '../generated/client.ts';
import { isUniqueViolation } from '../errors.js';
import { CAP_TRANSACTION, lockCountCap } from './count-cap-lock.js';
import { customerWhere } from './scope-where.js';

export type SchedulesStore = ReturnType<typeof createSchedulesStore>;
export type { ServiceSchedule };

export const OVERLAP_POLICIES = ['forbid', 'replace', 'allow'] as const;
export const CATCH_UP_POLICIES = ['one', 'none'] as const;

/** A schedule's latest record (docs/jobs.md#schedules): a run, or a missed, skipped or cancelled time. */
export interface ScheduleLastRun {
  id: string;
  scheduleId: string;
  status: string;
  exitCode: number | null;
  scheduledFor: Date | null;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
}

/** What the API writes of a schedule; `nextRunAt` is the scheduler's cursor, computed by the caller. */
export interface ScheduleFields {
  name: string;
  cron: string;
  timeZone: string;
  command: string[];
  component: string | null;
  timeoutSeconds: number;
  retries: number;
  overlapPolicy: (typeof OVERLAP_POLICIES)[number];
  catchUp: (typeof CATCH_UP_POLICIES)[number];
  enabled: boolean;
  nextRunAt: Date;
}

/**
 * Scheduled jobs (docs/jobs.md#schedules). A schedule is reached only through a service the caller
 * may see (its customer's, not deleted): another customer's schedule is simply not found.
 */
export function createSchedulesStore(db: Db) {
  return {
    /**
     * The new schedule, or why not: the service holds `cap` already (counted under the service's
     * cap lock, so parallel creates cannot pass it together), or the name is taken.
     */
    async createWithinLimit(
      serviceId: string,
      fields: ScheduleFields,
      cap: number,
    ): Promise<ServiceSchedule | 'limit_reached' | 'name_taken'> {
      try {
        return await db.$transaction(async (tx) => {
          await lockCountCap(tx, 'serviceSchedules', serviceId);
          if ((await tx.serviceSchedule.count({ where: { serviceId } })) >= cap) return 'limit_reached';
          return tx.serviceSchedule.create({ data: { serviceId, ...fields } });
        }, CAP_TRANSACTION);
      } catch (error) {
        if (isUniqueViolation(error)) return 'name_taken';
        throw error;
      }
    },

    listForService(serviceId: string): Promise<ServiceSchedule[]> {
      return db.serviceSchedule.findMany({ where: { serviceId }, orderBy: [{ name: 'asc' }, { id: 'asc' }] });
    },

    /**
     * The latest record of each schedule, in one statement whatever their number (a list must not
     * ask once per row): a lateral read of the newest row per schedule on the
     * `(schedule_id, created_at)` index, so a schedule with years of history costs one index probe.
     * The caller has checked the schedules are visible; one without a record is absent.
     */
    async lastRuns(scheduleIds: readonly string[]): Promise<Map<string, ScheduleLastRun>> {
      if (scheduleIds.length === 0) return new Map();
      const rows = await db.$queryRaw<
        {
          id: string;
          schedule_id: string;
          status: string;
          exit_code: number | null;
          scheduled_for: Date | null;
          created_at: Date;
          started_at: Date | null;
          finished_at: Date | null;
        }[]
      >`SELECT r.id, r.schedule_id, r.status, r.exit_code, r.scheduled_for, r.created_at, r.started_at, r.finished_at
          FROM unnest(${[...scheduleIds]}::text[]) AS s(id)
          CROSS JOIN LATERAL (
            SELECT * FROM service_runs
             WHERE schedule_id = s.id
             ORDER BY created_at DESC, id DESC
             LIMIT 1) r`;
      return new Map(
        rows.map((row) => [
          row.schedule_id,
          {
            id: row.id,
            scheduleId: row.schedule_id,
            status: row.status,
            exitCode: row.exit_code,
            scheduledFor: row.scheduled_for,
            createdAt: row.created_at,
            startedAt: row.started_at,
            finishedAt: row.finished_at,
          },
        ]),
      );
    },

    async findVisible(scope: CustomerScope, id: string): Promise<ServiceSchedule | null> {
      const tenant = customerWhere(scope);
      if (tenant === null) return null;
      return db.serviceSchedule.findFirst({ where: { id, service: { ...tenant, deletedAt: null } } });
    },

    /** The changed schedule, or `name_taken`; the caller found it visible. */
    async update(id: string, fields: Partial<ScheduleFields>): Promise<ServiceSchedule | 'name_taken'> {
      try {
        return await db.serviceSchedule.update({ where: { id }, data: fields });
      } catch (error) {
        if (isUniqueViolation(error)) return 'name_taken';
        throw error;
      }
    },

    /** Deletes the schedule and its run history (cascade); the worker running one stops it (cancel-watch.ts). */
    async remove(id: string): Promise<void> {
      await db.serviceSchedule.deleteMany({ where: { id } });
    },
  };
}
