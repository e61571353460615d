import type { TimeDecision } from '@hostctl/db';

/**
 * What becomes of each due time of one schedule (docs/jobs.md#missed-times-and-catch-up): a time
 * reached within `graceMs` runs; a later one is missed, except, with `catch_up: one`, the latest
 * due time (the one whose successor is still to come), which runs once on recovery. So after an
 * outage every time has one record, and at most one late run starts.
 */
export function decideTimes(input: {
  times: Date[];
  /** The first time after the last of `times`: later than `now` when `times` reaches the present. */
  next: Date | null;
  now: Date;
  graceMs: number;
  catchUp: string;
}): TimeDecision[] {
  const { times, now, graceMs } = input;
  const reachesPresent = input.next === null || input.next.getTime() > now.getTime();
  return times.map((scheduledFor, index): TimeDecision => {
    const lateMs = now.getTime() - scheduledFor.getTime();
    if (lateMs <= graceMs) return { scheduledFor, kind: 'run' };
    const isLatest = reachesPresent && index === times.length - 1;
    if (input.catchUp === 'one' && isLatest) return { scheduledFor, kind: 'run' };
    return {
      scheduledFor,
      kind: 'missed',
      reason: `no worker reached this time within ${Math.round(graceMs / 1000)} s (it was ${Math.round(lateMs / 1000)} s late)`,
    };
  });
}
