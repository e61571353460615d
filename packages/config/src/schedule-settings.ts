import { Type } from 'typebox';
import { describe } from './describe.js';

/** What the API accepts of a scheduled job (docs/jobs.md#limits). */
export const scheduleApiSettings = {
  SCHEDULE_MIN_INTERVAL_SECONDS: describe(
    Type.Integer({ default: 60, minimum: 1, maximum: 86400 }),
    'Shortest time between two times of a scheduled job: a cron expression whose upcoming times come closer is refused (400 naming /body/cron, docs/jobs.md#limits). Six-field (seconds) expressions pass when they respect it.',
  ),
  BACKUP_SCHEDULE_MIN_INTERVAL_SECONDS: describe(
    Type.Integer({ default: 3600, minimum: 1, maximum: 604800 }),
    "Shortest time between two times of a service's backup schedule (docs/backups.md#schedules): every backup stops or reads the volumes and prunes the repository, so the default is hourly. A closer expression is refused (400 naming /body/cron).",
  ),
};

/** The workers' scheduler tick (docs/jobs.md#guarantees); it fires backup schedules too (docs/backups.md#schedules). */
export const schedulerSettings = {
  SCHEDULER_INTERVAL_MS: describe(
    Type.Integer({ default: 5000, minimum: 100, maximum: 60000 }),
    'How often every worker looks for scheduled times that have come (docs/jobs.md#guarantees); a run starts at most about this long after its time.',
  ),
  SCHEDULE_MISSED_GRACE_MS: describe(
    Type.Integer({ default: 300000, minimum: 1000 }),
    'A scheduled time (of a job or a backup schedule) no worker reached within this long (workers down, a long outage) is recorded as missed instead of run late; with catch_up one, and always for backups, the latest missed time still runs once (docs/jobs.md#missed-times-and-catch-up).',
  ),
};
