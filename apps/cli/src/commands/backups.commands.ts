import { must, type Backup, type Restore } from '@hostctl/api-client';
import { assertKnownFlags, integerFlag, operands, optionalFlag } from '../args.js';
import {
  cellText,
  formatTable,
  printJson,
  type ClientCommand,
  type CommandContext,
} from '../client/context.js';
import { resolveService } from '../client/resolve-service.js';
import { EXIT, type ExitCode } from '../exit-codes.js';
import { DEFAULT_WAIT_SECONDS } from './deploy.commands.js';

/** A backup or restore run as the API answers it (docs/backups.md). */
type Run = Backup | Restore;

const WAIT_FLAGS = ['wait', 'timeout'] as const;
const POLL_MS = 1000;

/**
 * `--wait`: polls the run until it finished; exit 0 when it succeeded, 1 when it failed (the
 * reason on stderr), 3 when the wait ran out (the run goes on).
 */
async function waitIfAsked<R extends Run>(
  context: CommandContext,
  read: (id: string) => Promise<R>,
  accepted: R,
): Promise<ExitCode> {
  if (context.args.flags.get('wait') !== true) {
    if (context.json) printJson(context, accepted);
    else context.out(`${accepted.id}: ${accepted.status}`);
    return EXIT.ok;
  }
  const timeoutSeconds = integerFlag(context.args, 'timeout', 24 * 3600) ?? DEFAULT_WAIT_SECONDS;
  const deadline = Date.now() + timeoutSeconds * 1000;
  let run = accepted;
  while (run.status === 'queued' || run.status === 'running') {
    if (Date.now() > deadline) {
      context.err(`hostctl: ${run.id} is still ${run.status} after ${timeoutSeconds}s; it goes on`);
      return EXIT.timedOut;
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    run = await read(run.id);
  }
  if (context.json) printJson(context, run);
  else context.out(`${run.id}: ${run.status}`);
  if (run.status === 'succeeded') return EXIT.ok;
  context.err(`hostctl: ${run.id} failed: ${run.error ?? 'no reason given'}`);
  return EXIT.failed;
}

/** `backups create SERVICE [--wait [--timeout S]]`: an on-demand backup of every named volume. */
export const createBackup: ClientCommand = async (context) => {
  assertKnownFlags(context.args, WAIT_FLAGS);
  const [ref = ''] = operands(context.args, 2, ['SERVICE']);
  const client = context.client();
  const service = await resolveService(client, ref);
  const accepted = await must(
    client.api.POST('/api/services/{id}/backups', { params: { path: { id: service.id } } }),
  );
  return waitIfAsked(context, (id) => readBackup(context, id), accepted);
};

/** `backups list SERVICE`: the service's backup runs, newest first. */
export const listBackups: ClientCommand = async (context) => {
  assertKnownFlags(context.args, ['page', 'per-page']);
  const [ref = ''] = operands(context.args, 2, ['SERVICE']);
  const client = context.client();
  const service = await resolveService(client, ref);
  const page = await must(
    client.api.GET('/api/services/{id}/backups', {
      params: {
        path: { id: service.id },
        query: {
          page: integerFlag(context.args, 'page'),
          per_page: integerFlag(context.args, 'per-page', 100),
        },
      },
    }),
  );
  if (context.json) printJson(context, page);
  else context.out(formatTable(page.data, ['id', 'status', 'method', 'created_at', 'size_bytes', 'error']));
  return EXIT.ok;
};

/** `backups get BACKUP`: one run with its snapshots and log. */
export const getBackup: ClientCommand = async (context) => {
  assertKnownFlags(context.args, []);
  const [id = ''] = operands(context.args, 2, ['BACKUP']);
  const backup = await readBackup(context, id);
  if (context.json) printJson(context, backup);
  else {
    for (const [key, value] of Object.entries(backup))
      if (key !== 'log') context.out(`${key}: ${cellText(value)}`);
    context.out(backup.log);
  }
  return EXIT.ok;
};

/**
 * `restore BACKUP [--into-new NAME] [--wait [--timeout S]]`: the backup's volumes back into its own
 * service, or with --into-new into a new service NAME cloned from the backup (its id is the run's
 * service_id; --wait waits for the restore, the clone's first deployment follows it).
 */
export const restoreBackup: ClientCommand = async (context) => {
  assertKnownFlags(context.args, [...WAIT_FLAGS, 'into-new']);
  const [id = ''] = operands(context.args, 1, ['BACKUP']);
  const intoNew = optionalFlag(context.args, 'into-new');
  const api = context.client().api;
  const accepted = await must(
    intoNew === undefined
      ? api.POST('/api/backups/{id}/restore', { params: { path: { id } } })
      : api.POST('/api/backups/{id}/clone', { params: { path: { id } }, body: { name: intoNew } }),
  );
  if (intoNew !== undefined && !context.json) context.out(`new service ${intoNew}: ${accepted.service_id}`);
  return waitIfAsked(
    context,
    (restoreId) =>
      must(context.client().api.GET('/api/restores/{id}', { params: { path: { id: restoreId } } })),
    accepted,
  );
};

/**
 * `backups verify BACKUP [--wait [--timeout S]]`: a repository check of the backup; with --wait,
 * exit 0 when it passed, 1 when it failed (the reason on stderr), 3 when the wait ran out.
 */
export const verifyBackup: ClientCommand = async (context) => {
  assertKnownFlags(context.args, WAIT_FLAGS);
  const [id = ''] = operands(context.args, 2, ['BACKUP']);
  let backup = await must(
    context.client().api.POST('/api/backups/{id}/verify', { params: { path: { id } } }),
  );
  if (context.args.flags.get('wait') === true) {
    const timeoutSeconds = integerFlag(context.args, 'timeout', 24 * 3600) ?? DEFAULT_WAIT_SECONDS;
    const deadline = Date.now() + timeoutSeconds * 1000;
    while (backup.verify_status === 'queued' || backup.verify_status === 'running') {
      if (Date.now() > deadline) {
        context.err(`hostctl: the check of ${id} is still ${backup.verify_status} after ${timeoutSeconds}s`);
        return EXIT.timedOut;
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      backup = await readBackup(context, id);
    }
  }
  if (context.json) printJson(context, backup);
  else context.out(`${backup.id}: verify ${backup.verify_status ?? 'not asked'}`);
  if (backup.verify_status !== 'failed') return EXIT.ok;
  context.err(`hostctl: the check of ${backup.id} failed: ${backup.verify_error ?? 'no reason given'}`);
  return EXIT.failed;
};

function readBackup(context: CommandContext, id: string): Promise<Backup> {
  return must(context.client().api.GET('/api/backups/{id}', { params: { path: { id } } }));
}
