import { Type } from 'typebox';
import { describe } from './describe.js';

/** What the API accepts of a scheduled job (docs/jobs.md#limits). */
export const scheduleApiSettings = {
  SCHEDULE_MIN_INTERVAL_SECONDS: describe(
    Type.Integer({ default: 60, minimum: 1, maximum: 86400 }),
    'Shortest time between two times of a scheduled job: a cron expression whose upcoming times come closer is refused (400 naming /body/cron, docs/jobs.md#limits). Six-field (seconds) expressions pass when they respect it.',
  ),
};

/** The workers' scheduler tick (docs/jobs.md#guarantees). */
export const schedulerSettings = {
  SCHEDULER_INTERVAL_MS: describe(
    Type.Integer({ default: 5000, minimum: 100, maximum: 60000 }),
    'How often every worker looks for scheduled times that have come (docs/jobs.md#guarantees); a run starts at most about this long after its time.',
  ),
  SCHEDULE_MISSED_GRACE_MS: describe(
    Type.Integer({ default: 300000, minimum: 1000 }),
    'A scheduled time no worker reached within this long (workers down, a long outage) is recorded as missed instead of run late; with catch_up one, the latest missed time still runs once (docs/jobs.md#missed-times-and-catch-up).',
  ),
};
