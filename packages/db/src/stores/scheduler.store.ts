import type { Db } from '../client.js';
import type { Prisma, ServiceSchedule } from '../generated/client.ts';
import { insertNotifications } from './notification-outbox.js';
import { ACTIVE_RUN_STATUSES } from './runs.store.js';

export type SchedulerStore = ReturnType<typeof createSchedulerStore>;

export type DueSchedule = Pick<
  ServiceSchedule,
  | 'id'
  | 'serviceId'
  | 'name'
  | 'cron'
  | 'timeZone'
  | 'command'
  | 'component'
  | 'timeoutSeconds'
  | 'overlapPolicy'
  | 'catchUp'
  | 'nextRunAt'
>;

/** One scheduled time as the scheduler decided it: run it, or record it as missed (with why). */
export type TimeDecision = { scheduledFor: Date } & ({ kind: 'run' } | { kind: 'missed'; reason: string });

/** A failed scheduled run followed up: retried as `retryRunId`, or notified as job.failed. */
interface FollowUp {
  runId: string;
  retryRunId: string | null;
}

const FINAL_AT = () => new Date();
/** A pass may record a few hundred times of one schedule; Prisma's default of 5 s is too short under load. */
const PASS_TRANSACTION = { maxWait: 10_000, timeout: 30_000 } as const;

/**
 * The scheduler's half of scheduled jobs (docs/jobs.md#guarantees). Every write is safe for any
 * number of workers ticking at once: a scheduled time becomes a row only through
 * `INSERT … ON CONFLICT DO NOTHING` on the unique (schedule_id, scheduled_for, attempt), so a
 * second worker's, or a restarted worker's, insert of the same time adds nothing; a failed run is
 * followed up under its row lock and `followed_up_at`, so it is retried or notified once.
 */
export function createSchedulerStore(db: Db) {
  /** Inserts the row unless the time has one already; its id when this call inserted it. */
  async function insertTime(
    tx: Prisma.TransactionClient,
    data: Prisma.ServiceRunCreateManyInput,
  ): Promise<string | null> {
    const [row] = await tx.serviceRun.createManyAndReturn({
      data: [data],
      skipDuplicates: true,
      select: { id: true },
    });
    return row?.id ?? null;
  }

  return {
    /** Enabled schedules of live services whose cursor has come, earliest first. */
    dueSchedules(now: Date, limit: number): Promise<DueSchedule[]> {
      return db.serviceSchedule.findMany({
        where: { enabled: true, nextRunAt: { lte: now }, service: { deletedAt: null } },
        orderBy: { nextRunAt: 'asc' },
        take: limit,
        select: {
          id: true,
          serviceId: true,
          name: true,
          cron: true,
          timeZone: true,
          command: true,
          component: true,
          timeoutSeconds: true,
          overlapPolicy: true,
          catchUp: true,
          nextRunAt: true,
        },
      });
    },

    /**
     * Records the decided times of one schedule and moves its cursor to `next`, in one transaction:
     * each time a queued run, a `missed` record, or, when policy `forbid` finds an earlier run of the
     * schedule still going, a `skipped` record; under `replace` a new run cancels the earlier ones.
     * Returns the runs this call queued (to enqueue after commit) and how many times it recorded missed.
     */
    async recordTimes(
      schedule: DueSchedule,
      decisions: TimeDecision[],
      next: Date | null,
    ): Promise<{ queued: string[]; missed: Date[] }> {
      return db.$transaction(async (tx) => {
        const queued: string[] = [];
        const missed: Date[] = [];
        const base = {
          serviceId: schedule.serviceId,
          scheduleId: schedule.id,
          command: schedule.command,
          component: schedule.component,
          timeoutSeconds: schedule.timeoutSeconds,
        };
        // Missed times go in one statement: after a long outage a pass records hundreds of them.
        const missedRows = decisions.flatMap((decision) =>
          decision.kind === 'missed'
            ? [
                {
                  ...base,
                  scheduledFor: decision.scheduledFor,
                  status: 'missed',
                  error: decision.reason,
                  finishedAt: FINAL_AT(),
                },
              ]
            : [],
        );
        if (missedRows.length > 0) {
          const inserted = await tx.serviceRun.createManyAndReturn({
            data: missedRows,
            skipDuplicates: true,
            select: { scheduledFor: true },
          });
          for (const row of inserted) if (row.scheduledFor) missed.push(row.scheduledFor);
          missed.sort((a, b) => a.getTime() - b.getTime());
        }
        for (const decision of decisions) {
          const { scheduledFor } = decision;
          if (decision.kind === 'missed') continue;
          const active = await tx.serviceRun.findFirst({
            where: { scheduleId: schedule.id, status: { in: ACTIVE_RUN_STATUSES } },
            orderBy: { createdAt: 'desc' },
            select: { id: true, status: true },
          });
          if (active && schedule.overlapPolicy === 'forbid') {
            await insertTime(tx, {
              ...base,
              scheduledFor,
              status: 'skipped',
              error: `an earlier run (${active.id}) was still ${active.status}; the overlap policy is forbid`,
              finishedAt: FINAL_AT(),
            });
            continue;
          }
          const id = await insertTime(tx, { ...base, scheduledFor });
          if (!id) continue;
          queued.push(id);
          if (active && schedule.overlapPolicy === 'replace')
            await tx.serviceRun.updateMany({
              where: { scheduleId: schedule.id, status: { in: ACTIVE_RUN_STATUSES }, id: { not: id } },
              data: {
                status: 'cancelled',
                error: `replaced by the run scheduled for ${scheduledFor.toISOString()} (overlap policy replace)`,
                finishedAt: FINAL_AT(),
              },
            });
        }
        // Only forward: a slower worker's older cursor never moves it back.
        if (next)
          await tx.serviceSchedule.updateMany({
            where: { id: schedule.id, nextRunAt: { lt: next } },
            data: { nextRunAt: next },
          });
        if (missed.length > 0)
          await insertNotifications(tx, {
            event: 'job.missed',
            serviceId: schedule.serviceId,
            job: {
              scheduleId: schedule.id,
              scheduleName: schedule.name,
              status: 'missed',
              scheduledFor: missed[missed.length - 1]!,
              missedTimes: missed.length,
            },
            message: `schedule ${schedule.name} missed ${missed.length} scheduled time(s), the last ${missed[missed.length - 1]!.toISOString()}`,
          });
        return { queued, missed };
      }, PASS_TRANSACTION);
    },

    /**
     * Failed or timed-out runs of schedules, each acted on once: a further attempt of the same
     * scheduled time while the schedule allows retries, else one `job.failed` notification. Rows are
     * claimed with FOR UPDATE SKIP LOCKED and marked `followed_up_at` in the same transaction.
     */
    async followUpFailures(limit: number): Promise<FollowUp[]> {
      return db.$transaction(async (tx) => {
        const rows = await tx.$queryRaw<
          {
            id: string;
            schedule_id: string;
            service_id: string;
            scheduled_for: Date | null;
            attempt: number;
            status: string;
            exit_code: number | null;
          }[]
        >`SELECT r.id, r.schedule_id, r.service_id, r.scheduled_for, r.attempt, r.status, r.exit_code
            FROM service_runs r
           WHERE r.schedule_id IS NOT NULL AND r.status IN ('failed', 'timed_out') AND r.followed_up_at IS NULL
           ORDER BY r.finished_at
           LIMIT ${limit}
             FOR UPDATE OF r SKIP LOCKED`;
        const done: FollowUp[] = [];
        for (const row of rows) {
          await tx.serviceRun.update({ where: { id: row.id }, data: { followedUpAt: new Date() } });
          const schedule = await tx.serviceSchedule.findUnique({ where: { id: row.schedule_id } });
          if (schedule?.enabled && row.attempt <= schedule.retries) {
            const retryRunId = await insertTime(tx, {
              serviceId: row.service_id,
              scheduleId: schedule.id,
              scheduledFor: row.scheduled_for,
              attempt: row.attempt + 1,
              command: schedule.command,
              component: schedule.component,
              timeoutSeconds: schedule.timeoutSeconds,
            });
            done.push({ runId: row.id, retryRunId });
            continue;
          }
          await insertNotifications(tx, {
            event: 'job.failed',
            serviceId: row.service_id,
            job: {
              scheduleId: row.schedule_id,
              scheduleName: schedule?.name ?? '(deleted)',
              runId: row.id,
              status: row.status,
              scheduledFor: row.scheduled_for,
              exitCode: row.exit_code,
            },
            message: `schedule ${schedule?.name ?? row.schedule_id}: run ${row.id} ${row.status === 'timed_out' ? 'timed out' : 'failed'}${row.exit_code !== null ? ` (exit code ${row.exit_code})` : ''}${row.attempt > 1 ? ` after ${row.attempt} attempts` : ''}`,
          });
          done.push({ runId: row.id, retryRunId: null });
        }
        return done;
      }, PASS_TRANSACTION);
    },

    /**
     * Runs of schedules that no worker is carrying: still queued `queuedGraceMs` after they were
     * recorded (the enqueue failed, or Redis lost the job), or still running past their timeout and
     * `queuedGraceMs` (the worker died). The caller enqueues them again: the job id dedupes one
     * that is still there, and the run processor never runs a `running` run a second time.
     */
    async strandedRuns(now: Date, queuedGraceMs: number, limit: number): Promise<string[]> {
      const before = new Date(now.getTime() - queuedGraceMs);
      const rows = await db.$queryRaw<{ id: string }[]>`
        SELECT id FROM service_runs
         WHERE schedule_id IS NOT NULL
           AND ((status = 'queued' AND created_at < ${before})
             OR (status = 'running' AND started_at + make_interval(secs => timeout_seconds) < ${before}))
         ORDER BY created_at
         LIMIT ${limit}`;
      return rows.map((row) => row.id);
    },
  };
}
