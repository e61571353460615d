import type { Db } from '../client.js';
import type { TimeDecision } from './scheduler.store.js';

/** A schedule whose restore test has come, as the workers' scheduler reads it (docs/backups.md#verification). */
export interface DueVerifySchedule {
  id: string;
  serviceId: string;
  customerId: string;
  /** The schedule's `verify_cron`, read in the backup schedule's own time zone. */
  cron: string;
  timeZone: string;
  nextRunAt: Date;
  /** After an outage one test of the latest backup is what is wanted, not one per missed time. */
  catchUp: 'one';
}

export type BackupVerifySchedulerStore = ReturnType<typeof createBackupVerifySchedulerStore>;

const PASS_TRANSACTION = { maxWait: 10_000, timeout: 30_000 } as const;

/**
 * The scheduler's half of scheduled restore tests. A test is recorded on the backup it tests
 * (`verify_status` of the service's latest succeeded backup), not as a row per time, so there is
 * no unique (service, time) to insert against: instead the pass that moves the schedule's
 * `verify_next_run_at` from the value it read (compare-and-set, in the same transaction) is the
 * only one that queues the test. Two workers ticking at once, or one ticking again after a crash
 * between its read and its write, queue each time once.
 */
export function createBackupVerifySchedulerStore(db: Db) {
  return {
    /** Enabled schedules with a verify_cron of live services whose check time has come, earliest first. */
    async dueSchedules(now: Date, limit: number): Promise<DueVerifySchedule[]> {
      const rows = await db.backupSchedule.findMany({
        where: {
          enabled: true,
          verifyCron: { not: null },
          verifyNextRunAt: { lte: now },
          service: { deletedAt: null },
        },
        orderBy: { verifyNextRunAt: 'asc' },
        take: limit,
        select: {
          id: true,
          serviceId: true,
          verifyCron: true,
          timeZone: true,
          verifyNextRunAt: true,
          service: { select: { customerId: true } },
        },
      });
      return rows.flatMap(({ service, verifyCron, verifyNextRunAt, ...row }) =>
        verifyCron && verifyNextRunAt
          ? [
              {
                ...row,
                cron: verifyCron,
                nextRunAt: verifyNextRunAt,
                customerId: service.customerId,
                catchUp: 'one' as const,
              },
            ]
          : [],
      );
    },

    /**
     * Moves the cursor from the value the pass read to `next`; the pass that moved it queues one
     * check of the service's latest succeeded backup (unless one is queued or running already) and
     * returns its id to enqueue after commit. Missed times are returned for the log only: a check
     * is recorded on a backup, and the latest time still runs (`catchUp: one`).
     */
    async recordTimes(
      schedule: DueVerifySchedule,
      decisions: TimeDecision[],
      next: Date | null,
    ): Promise<{ queued: string[]; missed: Date[] }> {
      return db.$transaction(async (tx) => {
        const moved = await tx.backupSchedule.updateMany({
          where: { id: schedule.id, verifyNextRunAt: schedule.nextRunAt },
          data: { verifyNextRunAt: next },
        });
        if (moved.count === 0) return { queued: [], missed: [] };
        const missed = decisions.flatMap((decision) =>
          decision.kind === 'missed' ? [decision.scheduledFor] : [],
        );
        if (!decisions.some((decision) => decision.kind === 'run')) return { queued: [], missed };
        const latest = await tx.backup.findFirst({
          where: { serviceId: schedule.serviceId, status: 'succeeded' },
          orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
          select: { id: true },
        });
        if (!latest) return { queued: [], missed };
        const asked = await tx.backup.updateMany({
          where: {
            id: latest.id,
            status: 'succeeded',
            OR: [{ verifyStatus: null }, { verifyStatus: { in: ['passed', 'failed'] } }],
          },
          data: { verifyStatus: 'queued', verifyError: null },
        });
        return { queued: asked.count > 0 ? [latest.id] : [], missed };
      }, PASS_TRANSACTION);
    },

    /**
     * Checks still `queued` (on demand or scheduled): their enqueue may have failed or Redis lost
     * the job. The caller enqueues them again; the job id `verify.<backup>` makes that a no-op
     * while the job is still there.
     */
    async queuedChecks(limit: number): Promise<string[]> {
      const rows = await db.backup.findMany({
        where: { verifyStatus: 'queued' },
        orderBy: { id: 'asc' },
        take: limit,
        select: { id: true },
      });
      return rows.map((row) => row.id);
    },
  };
}
