import { must } from '@hostctl/api-client';
import { UsageError, assertKnownFlags, integerFlag, operands, optionalFlag } from '../args.js';
import { cellText, printJson, type ClientCommand, type CommandContext } from '../client/context.js';
import { resolveService } from '../client/resolve-service.js';
import { EXIT } from '../exit-codes.js';

const KEEP_FLAGS = ['keep-last', 'keep-daily', 'keep-weekly', 'keep-monthly'] as const;
const SET_FLAGS = ['cron', 'time-zone', 'enabled', 'verify-cron', ...KEEP_FLAGS] as const;

function print(context: CommandContext, schedule: Record<string, unknown>): void {
  if (context.json) printJson(context, schedule);
  else for (const [key, value] of Object.entries(schedule)) context.out(`${key}: ${cellText(value)}`);
}

/**
 * `backups schedule SERVICE`: shows the service's backup schedule and retention;
 * `backups schedule SERVICE --cron EXPR [--time-zone TZ] [--enabled true|false] [--keep-last N]
 * [--keep-daily N] [--keep-weekly N] [--keep-monthly N] [--verify-cron EXPR]` sets it (a PUT: what
 * is left out falls back to its default, no restore test without --verify-cron,
 * docs/backups.md#schedules).
 */
export const backupSchedule: ClientCommand = async (context) => {
  assertKnownFlags(context.args, SET_FLAGS);
  const [ref = ''] = operands(context.args, 2, ['SERVICE']);
  const client = context.client();
  const { id } = await resolveService(client, ref);
  const path = { params: { path: { id } } };
  const cron = optionalFlag(context.args, 'cron');
  if (cron === undefined) {
    if (SET_FLAGS.some((flag) => context.args.flags.has(flag)))
      throw new UsageError('--cron is required to set a backup schedule');
    print(context, await must(client.api.GET('/api/services/{id}/backup-schedule', path)));
    return EXIT.ok;
  }
  const enabled = optionalFlag(context.args, 'enabled');
  if (enabled !== undefined && enabled !== 'true' && enabled !== 'false')
    throw new UsageError(`--enabled must be true or false, not ${JSON.stringify(enabled)}`);
  const timeZone = optionalFlag(context.args, 'time-zone');
  const verifyCron = optionalFlag(context.args, 'verify-cron');
  const keep = (flag: (typeof KEEP_FLAGS)[number]) => integerFlag(context.args, flag, 100_000);
  const schedule = await must(
    client.api.PUT('/api/services/{id}/backup-schedule', {
      ...path,
      body: {
        cron,
        ...(timeZone !== undefined ? { time_zone: timeZone } : {}),
        ...(enabled !== undefined ? { enabled: enabled === 'true' } : {}),
        ...(verifyCron !== undefined ? { verify_cron: verifyCron } : {}),
        retention: {
          keep_last: keep('keep-last'),
          keep_daily: keep('keep-daily'),
          keep_weekly: keep('keep-weekly'),
          keep_monthly: keep('keep-monthly'),
        },
      },
    }),
  );
  print(context, schedule);
  return EXIT.ok;
};

/** `backups unschedule SERVICE`: removes the schedule and its retention; the backups stay. */
export const removeBackupSchedule: ClientCommand = async (context) => {
  assertKnownFlags(context.args, []);
  const [ref = ''] = operands(context.args, 2, ['SERVICE']);
  const client = context.client();
  const { id } = await resolveService(client, ref);
  await must(client.api.DELETE('/api/services/{id}/backup-schedule', { params: { path: { id } } }));
  context.out(`the backup schedule of ${ref} is removed; its backups stay`);
  return EXIT.ok;
};
