import type { Db } from '../client.js';
import type { BackupSchedule } from '../generated/client.ts';
import { isUniqueViolation } from '../errors.js';
import { insertNotifications } from './notification-outbox.js';
import type { TimeDecision } from './scheduler.store.js';

export type { BackupSchedule };
export type BackupSchedulesStore = ReturnType<typeof createBackupSchedulesStore>;
export type BackupSchedulerStore = ReturnType<typeof createBackupSchedulerStore>;

/** What the API stores of a backup schedule; a null keep_* falls back to the label, then the default. */
export interface BackupScheduleFields {
  cron: string;
  timeZone: string;
  enabled: boolean;
  keepLast: number | null;
  keepDaily: number | null;
  keepWeekly: number | null;
  keepMonthly: number | null;
  /** When to test the latest backup by restoring it (docs/backups.md#verification); null: never. */
  verifyCron: string | null;
}

/** The retention a service's schedule sets through the API; null where it sets nothing. */
export type RetentionOverrides = Pick<
  BackupScheduleFields,
  'keepLast' | 'keepDaily' | 'keepWeekly' | 'keepMonthly'
>;

/** A backup schedule whose cursor has come, as the workers' scheduler reads it. */
export interface DueBackupSchedule {
  id: string;
  serviceId: string;
  customerId: string;
  cron: string;
  timeZone: string;
  nextRunAt: Date;
  /** Backups always catch up the latest missed time: after an outage one backup is what is wanted. */
  catchUp: 'one';
}

const PASS_TRANSACTION = { maxWait: 10_000, timeout: 30_000 } as const;

/** The API's half: one schedule per service, reached only through a service the caller may see. */
export function createBackupSchedulesStore(db: Db) {
  return {
    find(serviceId: string): Promise<BackupSchedule | null> {
      return db.backupSchedule.findUnique({ where: { serviceId } });
    },

    /**
     * Creates or replaces the service's schedule; `nextRunAt` (and `verifyNextRunAt`, null with no
     * verify_cron) only when those times start again: left out, the cursor stays.
     */
    async put(
      serviceId: string,
      fields: BackupScheduleFields & { nextRunAt?: Date; verifyNextRunAt?: Date | null },
    ): Promise<BackupSchedule> {
      const { nextRunAt, verifyNextRunAt, ...rest } = fields;
      const verifyCursor = verifyNextRunAt === undefined ? {} : { verifyNextRunAt };
      const upsert = () =>
        db.backupSchedule.upsert({
          where: { serviceId },
          // A create always has a cursor: the service layer passes one when no schedule exists.
          create: { serviceId, ...rest, nextRunAt: nextRunAt ?? new Date(), ...verifyCursor },
          update: { ...rest, ...(nextRunAt ? { nextRunAt } : {}), ...verifyCursor },
        });
      // Two first PUTs at once both try the create; the loser finds the row and updates it.
      return upsert().catch((error: unknown) => {
        if (isUniqueViolation(error)) return upsert();
        throw error;
      });
    },

    /** Removes the schedule (not the backups it took: they stay listed and restorable). */
    async remove(serviceId: string): Promise<boolean> {
      const { count } = await db.backupSchedule.deleteMany({ where: { serviceId } });
      return count > 0;
    },
  };
}

/**
 * The scheduler's half of backup schedules (docs/backups.md#schedules), the same design as the job
 * scheduler's (scheduler.store.ts): a scheduled time becomes a `backups` row only through
 * `INSERT … ON CONFLICT DO NOTHING` on the unique (service_id, scheduled_for), and the cursor only
 * moves forward, so any number of workers ticking at once record each time once.
 */
export function createBackupSchedulerStore(db: Db) {
  return {
    /** Enabled schedules of live services whose cursor has come, earliest first. */
    async dueSchedules(now: Date, limit: number): Promise<DueBackupSchedule[]> {
      const rows = await db.backupSchedule.findMany({
        where: { enabled: true, nextRunAt: { lte: now }, service: { deletedAt: null } },
        orderBy: { nextRunAt: 'asc' },
        take: limit,
        select: {
          id: true,
          serviceId: true,
          cron: true,
          timeZone: true,
          nextRunAt: true,
          service: { select: { customerId: true } },
        },
      });
      return rows.map(({ service, ...row }) => ({ ...row, customerId: service.customerId, catchUp: 'one' }));
    },

    /**
     * Records the decided times of one schedule and moves its cursor to `next`, in one transaction:
     * each time a queued backup or a `missed` record (with one backup.missed notification for the
     * pass). A time that comes while an earlier backup of the service is still going is queued all
     * the same: the service's lock makes it wait its turn. Returns the backups this call queued (to
     * enqueue after commit) and the missed times it recorded.
     */
    async recordTimes(
      schedule: DueBackupSchedule,
      decisions: TimeDecision[],
      next: Date | null,
    ): Promise<{ queued: string[]; missed: Date[] }> {
      return db.$transaction(async (tx) => {
        const base = { serviceId: schedule.serviceId, customerId: schedule.customerId, method: 'live' };
        const missedRows = decisions.flatMap((decision) =>
          decision.kind === 'missed'
            ? [
                {
                  ...base,
                  scheduledFor: decision.scheduledFor,
                  status: 'missed',
                  error: decision.reason,
                  finishedAt: new Date(),
                },
              ]
            : [],
        );
        const missed = (
          missedRows.length === 0
            ? []
            : await tx.backup.createManyAndReturn({
                data: missedRows,
                skipDuplicates: true,
                select: { id: true, scheduledFor: true },
              })
        ).sort((a, b) => (a.scheduledFor?.getTime() ?? 0) - (b.scheduledFor?.getTime() ?? 0));
        const toRun = decisions.filter((decision) => decision.kind === 'run');
        const queued = (
          toRun.length === 0
            ? []
            : await tx.backup.createManyAndReturn({
                data: toRun.map((decision) => ({ ...base, scheduledFor: decision.scheduledFor })),
                skipDuplicates: true,
                select: { id: true },
              })
        ).map((row) => row.id);
        // Only forward: a slower worker's older cursor never moves it back.
        if (next)
          await tx.backupSchedule.updateMany({
            where: { id: schedule.id, nextRunAt: { lt: next } },
            data: { nextRunAt: next },
          });
        const last = missed[missed.length - 1];
        if (last)
          await insertNotifications(tx, {
            event: 'backup.missed',
            serviceId: schedule.serviceId,
            backup: {
              id: last.id,
              status: 'missed',
              scheduledFor: last.scheduledFor,
              missedTimes: missed.length,
            },
            message: `the backup schedule missed ${missed.length} scheduled time(s), the last ${last.scheduledFor?.toISOString() ?? ''}: no worker reached them`,
          });
        return { queued, missed: missed.flatMap((row) => (row.scheduledFor ? [row.scheduledFor] : [])) };
      }, PASS_TRANSACTION);
    },

    /**
     * Scheduled backups still queued `queuedGraceMs` after they were recorded: their enqueue failed
     * or Redis lost the job. The caller enqueues them again; the job id `backup.<id>` makes that a
     * no-op while the job is still there (waiting for the service's lock, say).
     */
    async strandedBackups(now: Date, queuedGraceMs: number, limit: number): Promise<string[]> {
      const rows = await db.backup.findMany({
        where: {
          scheduledFor: { not: null },
          status: 'queued',
          createdAt: { lt: new Date(now.getTime() - queuedGraceMs) },
        },
        orderBy: { createdAt: 'asc' },
        take: limit,
        select: { id: true },
      });
      return rows.map((row) => row.id);
    },
  };
}
