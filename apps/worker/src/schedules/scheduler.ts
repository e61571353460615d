import { timesUntil, type CronSchedule } from '@hostctl/cron';
import type { TimeDecision } from '@hostctl/db';
import type { Logger } from 'pino';
import { createPeriodic } from '../health/periodic.js';
import { messageOf } from '../pipeline/step-errors.js';
import { decideTimes } from './time-decisions.js';

/** What the tick reads of any schedule: its expression and its cursor (the earliest time not recorded). */
export interface CronCursor extends CronSchedule {
  id: string;
  nextRunAt: Date;
  catchUp: string;
}

/**
 * One kind of schedule the tick fires (job runs, backups): where its due schedules come from, how
 * a pass's decided times become rows (insert-if-absent, so two workers record each time once),
 * how a row is handed to a worker, and what else each pass enqueues again (retries, stranded rows).
 */
export interface ScheduleSource<S extends CronCursor = CronCursor> {
  kind: string;
  due(now: Date, limit: number): Promise<S[]>;
  record(
    schedule: S,
    decisions: TimeDecision[],
    next: Date | null,
  ): Promise<{ queued: string[]; missed: Date[] }>;
  /** Enqueues one recorded row; its deterministic job id makes a second enqueue a no-op. */
  enqueue(id: string): Promise<unknown>;
  /** Rows to enqueue again on this pass (a retry, a row whose job was lost). */
  sweep(now: Date): Promise<string[]>;
}

export interface SchedulerDeps {
  // Each source is only ever given back the schedules it returned itself (`record` is a method,
  // so a source of a richer schedule shape fits this list).
  sources: ScheduleSource[];
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

/**
 * The scheduler tick (docs/jobs.md#guarantees, docs/backups.md#schedules). Every worker runs it;
 * none is the leader. Each pass turns the scheduled times that have come into rows (runs or
 * backups, or `missed` records) through each source's insert-if-absent, so two workers ticking at
 * once, or a worker restarted mid-pass, record each time once; only the worker whose insert
 * created a row enqueues it (after commit). Then each source's sweep re-enqueues what it must.
 */
export function createScheduler(deps: SchedulerDeps) {
  const now = deps.now ?? (() => new Date());
  const { logger } = deps;
  const { sources } = deps;

  async function enqueue(source: ScheduleSource, id: string): Promise<void> {
    // A failed enqueue leaves the row queued: the source's sweep on a later pass enqueues it.
    await Promise.resolve(source.enqueue(id)).catch((error: unknown) =>
      logger.warn({ kind: source.kind, id, err: messageOf(error) }, 'scheduled row not enqueued'),
    );
  }

  async function passOf(source: ScheduleSource, at: Date): Promise<{ queued: number; missed: number }> {
    let queued = 0;
    let missed = 0;
    for (const schedule of await source.due(at, SCHEDULES_PER_PASS)) {
      const { times, next } = timesUntil(schedule, schedule.nextRunAt, at, TIMES_PER_SCHEDULE);
      const decisions = decideTimes({
        times,
        next,
        now: at,
        graceMs: deps.missedGraceMs,
        catchUp: schedule.catchUp,
      });
      const recorded = await source.record(schedule, decisions, next);
      for (const id of recorded.queued) await enqueue(source, id);
      queued += recorded.queued.length;
      missed += recorded.missed.length;
      if (recorded.missed.length > 0)
        logger.warn(
          { kind: source.kind, scheduleId: schedule.id, missed: recorded.missed.length },
          'scheduled times missed',
        );
    }
    for (const id of await source.sweep(at)) await enqueue(source, id);
    return { queued, missed };
  }

  async function runOnce(): Promise<{ queued: number; missed: number }> {
    const at = now();
    const total = { queued: 0, missed: 0 };
    for (const source of sources) {
      const pass = await passOf(source, at);
      total.queued += pass.queued;
      total.missed += pass.missed;
    }
    return total;
  }

  const periodic = createPeriodic('scheduler', deps.intervalMs, runOnce, logger);
  return { runOnce, start: periodic.start, stop: periodic.stop };
}
