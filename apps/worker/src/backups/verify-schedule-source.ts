import type { BackupVerifySchedulerStore, DueVerifySchedule } from '@hostctl/db';
import type { JobPayload } from '@hostctl/queue';
import type { ScheduleSource } from '../schedules/scheduler.js';

const QUEUED_PER_PASS = 200;

/**
 * Scheduled restore tests as a source of the workers' scheduler tick (docs/backups.md#verification):
 * a schedule's `verify_cron` times, read in its time zone with the same cron, grace and catch-up
 * rules as its backups; each time queues one check of the service's latest succeeded backup, the
 * same `verify` job as an on-demand check. The sweep enqueues again every check still queued.
 */
export function verifyScheduleSource(deps: {
  store: Pick<BackupVerifySchedulerStore, 'dueSchedules' | 'recordTimes' | 'queuedChecks'>;
  /** The producer's `verify` job; its id `verify.<backup>` makes a second enqueue a no-op. */
  producer: { enqueue: (name: 'verify', payload: JobPayload<'verify'>) => Promise<unknown> };
}): ScheduleSource<DueVerifySchedule> {
  const { store } = deps;
  return {
    kind: 'backup-verify',
    due: (now, limit) => store.dueSchedules(now, limit),
    record: (schedule, decisions, next) => store.recordTimes(schedule, decisions, next),
    enqueue: (backupId) => deps.producer.enqueue('verify', { backupId }),
    sweep: () => store.queuedChecks(QUEUED_PER_PASS),
  };
}
