// Cron expressions with an IANA time zone (docs/jobs.md#schedules): the one reading of a schedule,
// used by the API to validate it and by the worker's scheduler to compute the times it stands for.
import { Cron } from 'croner';

export interface CronSchedule {
  /** Five fields (minute precision) or six (seconds first). */
  cron: string;
  /** IANA name, e.g. Europe/Berlin; `UTC` is one too. */
  timeZone: string;
}

export interface CronProblem {
  field: 'cron' | 'time_zone';
  message: string;
}

/** How many upcoming times are checked against the minimum interval. */
const INTERVAL_SAMPLE = 50;
const CRON_MAX_LENGTH = 200;

function parse(schedule: CronSchedule): Cron {
  // 5-or-6-parts: no year field (a schedule that ends is not a schedule); paused: no timers here.
  return new Cron(schedule.cron, { timezone: schedule.timeZone, paused: true, mode: '5-or-6-parts' });
}

/** A known IANA time zone name (Intl knows exactly the zones the engine's tz database has). */
export function isTimeZone(name: string): boolean {
  if (name.trim() === '' || name !== name.trim()) return false;
  try {
    new Intl.DateTimeFormat('en', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/**
 * Why the schedule cannot be used, naming the field, or null when it can: a time zone Intl does not
 * know, an expression croner refuses, one that never fires, or one whose upcoming times come closer
 * together than `minIntervalSeconds` (a container per second is not a schedule).
 */
export function cronProblem(
  schedule: CronSchedule,
  minIntervalSeconds: number,
  now = new Date(),
): CronProblem | null {
  if (!isTimeZone(schedule.timeZone))
    return {
      field: 'time_zone',
      message: `unknown time zone ${JSON.stringify(schedule.timeZone)} (an IANA name such as Europe/Berlin or UTC)`,
    };
  if (schedule.cron.length > CRON_MAX_LENGTH)
    return { field: 'cron', message: `the expression is longer than ${CRON_MAX_LENGTH} characters` };
  let times: Date[];
  try {
    times = parse(schedule).nextRuns(INTERVAL_SAMPLE, now);
  } catch (error) {
    return { field: 'cron', message: `invalid cron expression: ${(error as Error).message}` };
  }
  if (times.length === 0) return { field: 'cron', message: 'the expression never matches a time' };
  for (let i = 1; i < times.length; i++) {
    const gap = (times[i]!.getTime() - times[i - 1]!.getTime()) / 1000;
    if (gap < minIntervalSeconds)
      return {
        field: 'cron',
        message: `times ${gap} s apart; a schedule runs at most every ${minIntervalSeconds} s`,
      };
  }
  return null;
}

/** The first time of the schedule strictly after `after`, or null if it never fires again. */
export function nextTime(schedule: CronSchedule, after: Date): Date | null {
  return parse(schedule).nextRun(after);
}

/**
 * The times from `first` (itself a time of the schedule) up to and including `until`, at most
 * `max` of them, and the first time after the last one returned: where the next pass starts.
 */
export function timesUntil(
  schedule: CronSchedule,
  first: Date,
  until: Date,
  max: number,
): { times: Date[]; next: Date | null } {
  const cron = parse(schedule);
  const times: Date[] = [];
  let cursor: Date | null = first;
  while (cursor && cursor.getTime() <= until.getTime() && times.length < max) {
    times.push(cursor);
    cursor = cron.nextRun(cursor);
  }
  return { times, next: cursor };
}
