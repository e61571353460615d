import type { DueSchedule, SchedulerStore } from '@hostctl/db';
import type { JobPayload } from '@hostctl/queue';
import type { ScheduleSource } from './scheduler.js';

const FOLLOW_UPS_PER_PASS = 100;
const STRANDED_PER_PASS = 200;
/** A scheduled run still queued this long after it was recorded has lost its job (Redis emptied). */
const STRANDED_AFTER_MS = 30_000;

/**
 * Scheduled jobs as a source of the tick (docs/jobs.md#guarantees): times become `service_runs`
 * rows; each pass also follows up failed runs (a retry, or job.failed) and re-enqueues runs no
 * worker carries.
 */
export function jobScheduleSource(deps: {
  store: Pick<SchedulerStore, 'dueSchedules' | 'recordTimes' | 'followUpFailures' | 'strandedRuns'>;
  /** The producer (its `run` job only; the job id `run.<id>` makes a second enqueue a no-op). */
  producer: { enqueue: (name: 'run', payload: JobPayload<'run'>) => Promise<unknown> };
}): ScheduleSource<DueSchedule> {
  const { store } = deps;
  return {
    kind: 'job',
    due: (now, limit) => store.dueSchedules(now, limit),
    record: (schedule, decisions, next) => store.recordTimes(schedule, decisions, next),
    enqueue: (runId) => deps.producer.enqueue('run', { runId }),
    async sweep(now) {
      const retries = (await store.followUpFailures(FOLLOW_UPS_PER_PASS)).flatMap((followUp) =>
        followUp.retryRunId ? [followUp.retryRunId] : [],
      );
      return [...retries, ...(await store.strandedRuns(now, STRANDED_AFTER_MS, STRANDED_PER_PASS))];
    },
  };
}
