import { Type, type Static } from 'typebox';
import { CATCH_UP_POLICIES, OVERLAP_POLICIES, RUN_STATUSES } from '@hostctl/db';
import { LIMITS } from '@hostctl/domain';
import { PageQuery, Timestamp } from '../../http/schemas.js';
import { literals } from '../services/services.schemas.js';
import { Command, RunTimeout } from '../runs/runs.schemas.js';

/** Bounds of a schedule (docs/jobs.md#limits); the per-service count is LIMITS.schedulesPerService. */
const SCHEDULE_LIMITS = { retriesMax: 5, cronMaxLength: 200, timeZoneMaxLength: 64 } as const;

const fields = {
  name: Type.String({
    pattern: '^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$',
    description: 'Unique within the service: lowercase letters, digits and inner hyphens, at most 63',
  }),
  cron: Type.String({
    minLength: 1,
    maxLength: SCHEDULE_LIMITS.cronMaxLength,
    description:
      'Five fields (minute hour day month weekday) or six with seconds first; nicknames such as @daily. Read in time_zone.',
  }),
  time_zone: Type.String({
    minLength: 1,
    maxLength: SCHEDULE_LIMITS.timeZoneMaxLength,
    description: 'IANA time zone the expression is read in (default UTC), e.g. Europe/Berlin',
  }),
  command: Command,
  component: Type.String({
    minLength: 1,
    maxLength: 63,
    description: 'The compose service whose image, variables and limits the runs take; default: the web one',
  }),
  timeout: RunTimeout,
  retries: Type.Integer({
    minimum: 0,
    maximum: SCHEDULE_LIMITS.retriesMax,
    description: 'Further attempts of a scheduled time whose run failed or timed out (default 0)',
  }),
  overlap_policy: literals(OVERLAP_POLICIES),
  catch_up: literals(CATCH_UP_POLICIES),
  enabled: Type.Boolean(),
};

export const ScheduleCreate = Type.Object(
  {
    name: fields.name,
    cron: fields.cron,
    time_zone: Type.Optional(fields.time_zone),
    command: fields.command,
    component: Type.Optional(fields.component),
    timeout: Type.Optional(fields.timeout),
    retries: Type.Optional(fields.retries),
    overlap_policy: Type.Optional(fields.overlap_policy),
    catch_up: Type.Optional(fields.catch_up),
    enabled: Type.Optional(fields.enabled),
  },
  { additionalProperties: false },
);
export type ScheduleCreate = Static<typeof ScheduleCreate>;

export const SchedulePatch = Type.Object(
  {
    name: Type.Optional(fields.name),
    cron: Type.Optional(fields.cron),
    time_zone: Type.Optional(fields.time_zone),
    command: Type.Optional(fields.command),
    component: Type.Optional(Type.Union([fields.component, Type.Null()])),
    timeout: Type.Optional(fields.timeout),
    retries: Type.Optional(fields.retries),
    overlap_policy: Type.Optional(fields.overlap_policy),
    catch_up: Type.Optional(fields.catch_up),
    enabled: Type.Optional(fields.enabled),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type SchedulePatch = Static<typeof SchedulePatch>;

const nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) =>
  Type.Union([schema, Type.Null()]);

/** A schedule's latest record: enough to say how its last time went; `GET /api/runs/:id` has the rest. */
const ScheduleLastRun = Type.Object({
  id: Type.String(),
  status: literals(RUN_STATUSES),
  exit_code: nullable(Type.Integer()),
  duration_ms: nullable(Type.Integer()),
  scheduled_for: nullable(Timestamp),
  created_at: Timestamp,
  started_at: nullable(Timestamp),
  finished_at: nullable(Timestamp),
});

export const Schedule = Type.Object({
  id: Type.String(),
  service_id: Type.String(),
  name: Type.String(),
  cron: Type.String(),
  time_zone: Type.String(),
  command: Type.Array(Type.String()),
  component: Type.Union([Type.String(), Type.Null()]),
  timeout: Type.Integer(),
  retries: Type.Integer(),
  overlap_policy: literals(OVERLAP_POLICIES),
  catch_up: literals(CATCH_UP_POLICIES),
  enabled: Type.Boolean(),
  next_run_at: Type.Union([Timestamp, Type.Null()], {
    description: 'The next scheduled time not yet recorded; null while disabled',
  }),
  last_run: Type.Union([ScheduleLastRun, Type.Null()], {
    description:
      'The latest record of the schedule (a run, or a missed, skipped or cancelled time); null before its first',
  }),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type Schedule = Static<typeof Schedule>;

export const ScheduleList = Type.Object({
  data: Type.Array(Schedule, { maxItems: LIMITS.schedulesPerService }),
});
export type ScheduleList = Static<typeof ScheduleList>;

export const ScheduleRunsQuery = Type.Object(PageQuery, { additionalProperties: false });
