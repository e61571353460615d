import { must, type NewSchedule, type Schedule, type ScheduleChange } from '@hostctl/api-client';
import {
  assertKnownFlags,
  integerFlag,
  operands,
  optionalFlag,
  requireFlag,
  UsageError,
  type ParsedArgs,
} from '../args.js';
import {
  cellText,
  commandText,
  formatTable,
  printJson,
  type ClientCommand,
  type CommandContext,
} from '../client/context.js';
import { resolveSchedule } from '../client/resolve-schedule.js';
import { resolveService } from '../client/resolve-service.js';
import { EXIT } from '../exit-codes.js';
import { idempotencyHeader } from './deploy.commands.js';

// Scheduled jobs (docs/jobs.md#schedules): `hostctl schedules list|get|create|update|delete` here,
// `run` and `runs` in schedule-runs.commands.ts. SERVICE comes first, as in `run`: schedules are
// named within their service.

const FIELD_FLAGS = [
  'cron',
  'time-zone',
  'component',
  'timeout',
  'retries',
  'overlap',
  'catch-up',
  'enabled',
];
const OVERLAP = ['forbid', 'replace', 'allow'] as const;
const CATCH_UP = ['one', 'none'] as const;

function oneOf<T extends string>(args: ParsedArgs, flag: string, allowed: readonly T[]): T | undefined {
  const value = optionalFlag(args, flag);
  if (value !== undefined && !allowed.includes(value as T))
    throw new UsageError(`--${flag} must be one of ${allowed.join(', ')}, not ${JSON.stringify(value)}`);
  return value as T | undefined;
}

/**
 * The fields the flags set, absent ones left out so the API's defaults (create) or the schedule's
 * current values (update) apply. The API checks the rest (cron, zone, component, command).
 */
function fieldsFrom(args: ParsedArgs, command: string[]) {
  const timeout = integerFlag(args, 'timeout', 3600);
  if (timeout === 0) throw new UsageError('--timeout must be at least 1');
  // --enabled true|false, as `backups schedule` takes it.
  const enabled = oneOf(args, 'enabled', ['true', 'false'] as const);
  return {
    cron: optionalFlag(args, 'cron'),
    time_zone: optionalFlag(args, 'time-zone'),
    timeout,
    retries: integerFlag(args, 'retries', 5),
    overlap_policy: oneOf(args, 'overlap', OVERLAP),
    catch_up: oneOf(args, 'catch-up', CATCH_UP),
    enabled: enabled === undefined ? undefined : enabled === 'true',
    command: command.length > 0 ? command : undefined,
  };
}

/** How the schedule's last time went, in a few words (`failed (exit 3) 2026-…`), or `never`. */
function lastRunText(run: Schedule['last_run'], withId = false): string {
  if (!run) return 'never';
  const code = run.exit_code === null ? '' : ` (exit ${run.exit_code})`;
  return `${run.status}${code} ${run.started_at ?? run.scheduled_for ?? run.created_at}${withId ? `, run ${run.id}` : ''}`;
}

function printSchedule(context: CommandContext, schedule: Schedule, verb?: string): void {
  if (context.json) return printJson(context, schedule);
  if (verb) {
    const next = schedule.next_run_at ? `next run at ${schedule.next_run_at}` : 'disabled';
    return context.out(`schedule ${schedule.name} (${schedule.id}) ${verb}; ${next}`);
  }
  for (const [key, value] of Object.entries(schedule)) {
    const text =
      key === 'command'
        ? commandText(schedule.command)
        : key === 'last_run'
          ? lastRunText(schedule.last_run, true)
          : cellText(value);
    context.out(`${key}: ${text}`);
  }
}

export const listSchedules: ClientCommand = async (context) => {
  assertKnownFlags(context.args, []);
  const [ref = ''] = operands(context.args, 2, ['SERVICE']);
  const client = context.client();
  const service = await resolveService(client, ref);
  const list = await must(
    client.api.GET('/api/services/{id}/schedules', { params: { path: { id: service.id } } }),
  );
  if (context.json) printJson(context, list);
  else if (list.data.length === 0) context.out(`${service.name} has no schedules`);
  else
    context.out(
      formatTable(
        list.data.map((s) => ({ ...s, command: commandText(s.command), last_run: lastRunText(s.last_run) })),
        ['name', 'cron', 'time_zone', 'enabled', 'next_run_at', 'last_run', 'command', 'id'],
      ),
    );
  return EXIT.ok;
};

export const getSchedule: ClientCommand = async (context) => {
  assertKnownFlags(context.args, []);
  const [serviceRef = '', ref = ''] = operands(context.args, 2, ['SERVICE', 'SCHEDULE']);
  const client = context.client();
  printSchedule(context, await resolveSchedule(client, await resolveService(client, serviceRef), ref));
  return EXIT.ok;
};

/** `schedules create SERVICE --name N --cron EXPR [...] -- CMD ARGS…` */
export const createSchedule: ClientCommand = async (context) => {
  const { args } = context;
  assertKnownFlags(args, ['name', 'idempotency-key', ...FIELD_FLAGS]);
  const [serviceRef, ...command] = args.positional.slice(2);
  if (!serviceRef) throw new UsageError('missing SERVICE');
  if (command.length === 0)
    throw new UsageError(
      'missing the command: hostctl schedules create SERVICE --name N --cron EXPR -- CMD ARGS…',
    );
  const body: NewSchedule = {
    ...fieldsFrom(args, command),
    name: requireFlag(args, 'name'),
    cron: requireFlag(args, 'cron'),
    command,
    component: optionalFlag(args, 'component'),
  };
  const client = context.client();
  const service = await resolveService(client, serviceRef);
  const created = await must(
    client.api.POST('/api/services/{id}/schedules', {
      params: { path: { id: service.id }, header: idempotencyHeader(context) },
      body,
    }),
  );
  printSchedule(context, created, 'created');
  return EXIT.ok;
};

/** `schedules update SERVICE SCHEDULE [--name N] [--cron …] … [-- CMD ARGS…]`: what is given changes. */
export const updateSchedule: ClientCommand = async (context) => {
  const { args } = context;
  assertKnownFlags(args, ['name', ...FIELD_FLAGS]);
  const [serviceRef, ref, ...command] = args.positional.slice(2);
  if (!serviceRef || !ref) throw new UsageError(`missing ${serviceRef ? 'SCHEDULE' : 'SERVICE SCHEDULE'}`);
  const component = optionalFlag(args, 'component');
  const change: ScheduleChange = {
    ...fieldsFrom(args, command),
    name: optionalFlag(args, 'name'),
    // --component '' goes back to the default (the web component).
    component: component === '' ? null : component,
  };
  if (Object.values(change).every((value) => value === undefined))
    throw new UsageError('nothing to change: give a flag (--cron, --enabled false…) or a command after --');
  const client = context.client();
  const schedule = await resolveSchedule(client, await resolveService(client, serviceRef), ref);
  const saved = await must(
    client.api.PATCH('/api/schedules/{id}', { params: { path: { id: schedule.id } }, body: change }),
  );
  printSchedule(context, saved, 'saved');
  return EXIT.ok;
};

/** Deleting needs --yes: the schedule's run history (and their output) goes with it. */
export const deleteSchedule: ClientCommand = async (context) => {
  assertKnownFlags(context.args, ['yes']);
  const [serviceRef = '', ref = ''] = operands(context.args, 2, ['SERVICE', 'SCHEDULE']);
  const client = context.client();
  const schedule = await resolveSchedule(client, await resolveService(client, serviceRef), ref);
  if (context.args.flags.get('yes') !== true)
    throw new UsageError(
      `deleting schedule ${schedule.name} (${schedule.id}) removes its run history and cannot be undone: add --yes`,
    );
  await must(client.api.DELETE('/api/schedules/{id}', { params: { path: { id: schedule.id } } }));
  if (context.json) printJson(context, { id: schedule.id, name: schedule.name, deleted: true });
  else context.out(`schedule ${schedule.name} (${schedule.id}) deleted, with its run history`);
  return EXIT.ok;
};
