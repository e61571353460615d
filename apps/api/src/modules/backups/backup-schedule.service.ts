import { customerScope, type Principal } from '@hostctl/auth-policy';
import { cronProblem, nextTime } from '@hostctl/cron';
import { DomainError, validationError } from '@hostctl/domain';
import type { BackupSchedule as Row, BackupSchedulesStore, ServicesStore } from '@hostctl/db';
import type { BackupSchedule, BackupScheduleBody } from './backup-schedule.schemas.js';

export type BackupScheduleService = ReturnType<typeof createBackupScheduleService>;

/**
 * A service's backup schedule and retention (docs/backups.md#schedules): validated with the same
 * cron reading as job schedules (@hostctl/cron), stored with the cursor of its next time; the
 * workers' scheduler turns the times into backups. Another customer's service is a 404.
 */
export function createBackupScheduleService(deps: {
  store: BackupSchedulesStore;
  services: Pick<ServicesStore, 'findById'>;
  /** BACKUP_SCHEDULE_MIN_INTERVAL_SECONDS. */
  minIntervalSeconds: number;
  now?: () => Date;
}) {
  const now = deps.now ?? (() => new Date());

  async function serviceOr404(principal: Principal, serviceId: string): Promise<string> {
    const service = await deps.services.findById(customerScope(principal), serviceId);
    if (!service) throw new DomainError('not_found', `service ${serviceId} not found`);
    return service.id;
  }

  async function scheduleOr404(serviceId: string): Promise<Row> {
    const found = await deps.store.find(serviceId);
    if (!found) throw new DomainError('not_found', `service ${serviceId} has no backup schedule`);
    return found;
  }

  /**
   * The first check time of a verify_cron, read like the backup cron (same bounds: a restore test
   * reads pack data and fills scratch volumes, at least as costly as a backup).
   */
  function verifyStart(verifyCron: string, timeZone: string): Date {
    const schedule = { cron: verifyCron, timeZone };
    const problem = cronProblem(schedule, deps.minIntervalSeconds, now());
    if (problem) throw validationError('/body/verify_cron', problem.message);
    const first = nextTime(schedule, now());
    if (!first) throw validationError('/body/verify_cron', 'the expression never matches a time again');
    return first;
  }

  return {
    async get(principal: Principal, serviceId: string): Promise<BackupSchedule> {
      return toSchedule(await scheduleOr404(await serviceOr404(principal, serviceId)));
    },

    /** Creates or replaces the schedule; a new expression, zone or re-enabling starts from now. */
    async put(principal: Principal, serviceId: string, body: BackupScheduleBody): Promise<BackupSchedule> {
      const id = await serviceOr404(principal, serviceId);
      const fields = {
        cron: body.cron,
        timeZone: body.time_zone ?? 'UTC',
        enabled: body.enabled ?? true,
        keepLast: body.retention?.keep_last ?? null,
        keepDaily: body.retention?.keep_daily ?? null,
        keepWeekly: body.retention?.keep_weekly ?? null,
        keepMonthly: body.retention?.keep_monthly ?? null,
        verifyCron: body.verify_cron ?? null,
      };
      const problem = cronProblem(fields, deps.minIntervalSeconds, now());
      if (problem) throw validationError(`/body/${problem.field}`, problem.message);
      const next = nextTime(fields, now());
      if (!next) throw validationError('/body/cron', 'the expression never matches a time again');
      const verifyNext = fields.verifyCron ? verifyStart(fields.verifyCron, fields.timeZone) : null;
      const current = await deps.store.find(id);
      // Times while disabled or under the old expression are not missed: they were never asked for.
      const restarts =
        !current ||
        current.cron !== fields.cron ||
        current.timeZone !== fields.timeZone ||
        (fields.enabled && !current.enabled);
      // The check's cursor restarts on its own terms: a new verify_cron, zone or re-enabling.
      const verifyRestarts = restarts || current?.verifyCron !== fields.verifyCron;
      return toSchedule(
        await deps.store.put(id, {
          ...fields,
          ...(restarts ? { nextRunAt: next } : {}),
          ...(verifyRestarts ? { verifyNextRunAt: verifyNext } : {}),
        }),
      );
    },

    /** Removes the schedule and its retention; the backups it took stay. */
    async remove(principal: Principal, serviceId: string): Promise<void> {
      const id = await serviceOr404(principal, serviceId);
      if (!(await deps.store.remove(id)))
        throw new DomainError('not_found', `service ${serviceId} has no backup schedule`);
    },
  };
}

function toSchedule(row: Row): BackupSchedule {
  return {
    service_id: row.serviceId,
    cron: row.cron,
    time_zone: row.timeZone,
    enabled: row.enabled,
    retention: {
      keep_last: row.keepLast,
      keep_daily: row.keepDaily,
      keep_weekly: row.keepWeekly,
      keep_monthly: row.keepMonthly,
    },
    next_run_at: row.enabled ? row.nextRunAt.toISOString() : null,
    verify_cron: row.verifyCron,
    verify_next_run_at: row.enabled && row.verifyNextRunAt ? row.verifyNextRunAt.toISOString() : null,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}
