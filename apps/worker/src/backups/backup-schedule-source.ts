import type { BackupSchedulerStore, DueBackupSchedule } from '@hostctl/db';
import type { JobPayload } from '@hostctl/queue';
import type { ScheduleSource } from '../schedules/scheduler.js';

const STRANDED_PER_PASS = 200;
/** A scheduled backup still queued this long after it was recorded may have lost its job. */
const STRANDED_AFTER_MS = 60_000;

/**
 * Backup schedules as a source of the workers' scheduler tick (docs/backups.md#schedules): each
 * time becomes one `backups` row (unique per service and time) handed to the `backup` job, the same
 * processor as an on-demand backup; a time beyond the grace is a `missed` row and backup.missed.
 */
export function backupScheduleSource(deps: {
  store: Pick<BackupSchedulerStore, 'dueSchedules' | 'recordTimes' | 'strandedBackups'>;
  /** The producer's `backup` job; its id `backup.<id>` makes a second enqueue a no-op. */
  producer: { enqueue: (name: 'backup', payload: JobPayload<'backup'>) => Promise<unknown> };
}): ScheduleSource<DueBackupSchedule> {
  const { store } = deps;
  return {
    kind: 'backup',
    due: (now, limit) => store.dueSchedules(now, limit),
    record: (schedule, decisions, next) => store.recordTimes(schedule, decisions, next),
    enqueue: (backupId) => deps.producer.enqueue('backup', { backupId }),
    sweep: (now) => store.strandedBackups(now, STRANDED_AFTER_MS, STRANDED_PER_PASS),
  };
}
