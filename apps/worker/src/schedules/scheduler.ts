import { timesUntil } from '@hostctl/cron';
import type { SchedulerStore } from '@hostctl/db';
import type { JobPayload } from '@hostctl/queue';
import type { Logger } from 'pino';
import { createPeriodic } from '../health/periodic.js';
import { messageOf } from '../pipeline/step-errors.js';
import { decideTimes } from './time-decisions.js';

/**
 * The scheduler tick (docs/jobs.md#guarantees). Every worker runs it; none is the leader. Each pass
 * turns the scheduled times that have come into rows (runs, or `missed`/`skipped` records) through
 * the store's insert-if-absent, so two workers ticking at once, or a worker restarted mid-pass,
 * record each time once; only the worker whose insert created a run enqueues it (after commit).
 * The same pass follows up failed runs (retry or job.failed) and re-enqueues runs no worker carries.
 */
export interface SchedulerDeps {
  store: Pick<SchedulerStore, 'dueSchedules' | 'recordTimes' | 'followUpFailures' | 'strandedRuns'>;
  /** The producer (its `run` job only; the job id `run.<id>` makes a second enqueue a no-op). */
  producer: { enqueue: (name: 'run', payload: JobPayload<'run'>) => Promise<unknown> };
  intervalMs: number;
  /** SCHEDULE_MISSED_GRACE_MS: a time reached later than this is missed (or caught up). */
  missedGraceMs: number;
  logger: Logger;
  /** The clock; tests pass their own to stand hours later without waiting. */
  now?: () => Date;
}

const SCHEDULES_PER_PASS = 200;
/** Due times of one schedule recorded per pass: a long outage is worked off over a few passes. */
const TIMES_PER_SCHEDULE = 200;
const FOLLOW_UPS_PER_PASS = 100;
/** A scheduled run still queued this long after it was recorded has lost its job (Redis emptied). */
const STRANDED_AFTER_MS = 30_000;

export function createScheduler(deps: SchedulerDeps) {
  const now = deps.now ?? (() => new Date());
  const { store, logger } = deps;

  async function enqueue(runId: string): Promise<void> {
    // A failed enqueue leaves the run queued: the stranded sweep of a later pass enqueues it.
    await deps.producer
      .enqueue('run', { runId })
      .catch((error: unknown) => logger.warn({ runId, err: messageOf(error) }, 'scheduled run not enqueued'));
  }

  async function runOnce(): Promise<{ queued: number; missed: number }> {
    const at = now();
    let queued = 0;
    let missed = 0;
    for (const schedule of await store.dueSchedules(at, SCHEDULES_PER_PASS)) {
      const { times, next } = timesUntil(schedule, schedule.nextRunAt, at, TIMES_PER_SCHEDULE);
      const decisions = decideTimes({
        times,
        next,
        now: at,
        graceMs: deps.missedGraceMs,
        catchUp: schedule.catchUp,
      });
      const recorded = await store.recordTimes(schedule, decisions, next);
      for (const runId of recorded.queued) await enqueue(runId);
      queued += recorded.queued.length;
      missed += recorded.missed.length;
      if (recorded.missed.length > 0)
        logger.warn({ scheduleId: schedule.id, missed: recorded.missed.length }, 'scheduled times missed');
    }
    for (const followUp of await store.followUpFailures(FOLLOW_UPS_PER_PASS))
      if (followUp.retryRunId) await enqueue(followUp.retryRunId);
    for (const runId of await store.strandedRuns(at, STRANDED_AFTER_MS, SCHEDULES_PER_PASS))
      await enqueue(runId);
    return { queued, missed };
  }

  const periodic = createPeriodic('scheduler', deps.intervalMs, runOnce, logger);
  return { runOnce, start: periodic.start, stop: periodic.stop };
}
