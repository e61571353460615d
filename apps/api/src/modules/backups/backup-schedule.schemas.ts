import { Type, type Static } from 'typebox';
import { Id, Timestamp } from '../../http/schemas.js';

/**
 * Bounds of a backup schedule's retention (docs/backups.md#schedules): at least the backup just
 * taken is kept, and no rule asks for more than a few years of snapshots. The table's CHECK
 * (migration 20261128140000) repeats them.
 */
const RETENTION_LIMITS = {
  keep_last: { minimum: 1, maximum: 1000 },
  keep_daily: { minimum: 0, maximum: 1000 },
  keep_weekly: { minimum: 0, maximum: 520 },
  keep_monthly: { minimum: 0, maximum: 240 },
} as const;

const keep = (name: keyof typeof RETENTION_LIMITS, what: string) =>
  Type.Union([Type.Integer({ ...RETENTION_LIMITS[name], description: what }), Type.Null()]);

const Retention = Type.Object(
  {
    keep_last: Type.Optional(keep('keep_last', 'The newest N snapshots of each volume')),
    keep_daily: Type.Optional(keep('keep_daily', 'One snapshot per day, for the last D days with one')),
    keep_weekly: Type.Optional(keep('keep_weekly', 'One snapshot per week, for the last W weeks')),
    keep_monthly: Type.Optional(keep('keep_monthly', 'One snapshot per month, for the last M months')),
  },
  {
    additionalProperties: false,
    description:
      "Overrides the compose labels and the operator's defaults rule by rule; a rule left out or null falls back to them",
  },
);

export const BackupScheduleBody = Type.Object(
  {
    cron: Type.String({
      minLength: 1,
      maxLength: 200,
      description:
        'Five fields (minute hour day month weekday) or six with seconds first; nicknames such as @daily. Read in time_zone.',
    }),
    time_zone: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: 'IANA time zone (default UTC), e.g. Europe/Berlin',
      }),
    ),
    enabled: Type.Optional(
      Type.Boolean({
        description: 'Default true; false keeps the retention policy and takes no scheduled backup',
      }),
    ),
    retention: Type.Optional(Retention),
    verify_cron: Type.Optional(
      Type.Union([Type.String({ minLength: 1, maxLength: 200 }), Type.Null()], {
        description:
          'When to test the latest succeeded backup by restoring it (docs/backups.md#verification), read like cron in time_zone; null or left out: never',
      }),
    ),
  },
  { additionalProperties: false },
);
export type BackupScheduleBody = Static<typeof BackupScheduleBody>;

const Kept = Type.Union([Type.Integer(), Type.Null()]);

export const BackupSchedule = Type.Object(
  {
    service_id: Id,
    cron: Type.String(),
    time_zone: Type.String(),
    enabled: Type.Boolean(),
    retention: Type.Object({ keep_last: Kept, keep_daily: Kept, keep_weekly: Kept, keep_monthly: Kept }),
    next_run_at: Type.Union([Timestamp, Type.Null()], {
      description: 'The next scheduled time not yet recorded; null while disabled',
    }),
    verify_cron: Type.Union([Type.String(), Type.Null()]),
    verify_next_run_at: Type.Union([Timestamp, Type.Null()], {
      description: 'The next restore test not yet taken; null without verify_cron or while disabled',
    }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { description: "A service's backup schedule and retention policy" },
);
export type BackupSchedule = Static<typeof BackupSchedule>;
