import { readFile } from 'node:fs/promises';
import { must } from '@hostctl/api-client';
import { UsageError, assertKnownFlags, operands, optionalFlag, requireFlag } from '../args.js';
import { ApiError } from '../client/api-client.js';
import { cellText, printJson, type ClientCommand, type CommandContext } from '../client/context.js';
import { CliError, EXIT } from '../exit-codes.js';

const SET_FLAGS = [
  'endpoint',
  'bucket',
  'prefix',
  'region',
  'access-key-id',
  'secret-key-stdin',
  'ca-file',
  'reset',
];
/** What --reset may set back to its default (prefix hostctl, region us-east-1, no CA): the flag's name → the field. */
const RESETTABLE = { prefix: 'prefix', region: 'region', 'ca-file': 'ca_certificate' } as const;

interface TargetChanges {
  endpoint?: string;
  bucket?: string;
  prefix?: string | null;
  region?: string | null;
  ca_certificate?: string | null;
  access_key_id?: string;
  secret_access_key?: string;
}

function print(context: CommandContext, target: Record<string, unknown>): void {
  if (context.json) printJson(context, target);
  else for (const [key, value] of Object.entries(target)) context.out(`${key}: ${cellText(value)}`);
}

/**
 * The credentials a `set` sends. With `--secret-key-stdin`: the new key pair. Without it: no secret,
 * so the API keeps the stored pair (for the same endpoint, bucket and key id; it refuses otherwise,
 * naming /body/secret_access_key): the CLI cannot read the secret back to resend it, and an
 * operator changing the prefix should not need it.
 */
async function credentialsOf(
  context: CommandContext,
): Promise<{ access_key_id?: string; secret_access_key?: string }> {
  const { args } = context;
  if (args.flags.get('secret-key-stdin') !== true) {
    const accessKeyId = optionalFlag(args, 'access-key-id');
    return accessKeyId === undefined ? {} : { access_key_id: accessKeyId };
  }
  const accessKeyId = requireFlag(args, 'access-key-id');
  const secret = (await context.readStdin()).trim();
  if (secret === '') throw new UsageError('standard input held no secret access key');
  return { access_key_id: accessKeyId, secret_access_key: secret };
}

/** `--reset prefix,region,ca-file`: those fields back to their defaults (null in a PATCH). */
function resetsOf(context: CommandContext): Partial<Record<'prefix' | 'region' | 'ca_certificate', null>> {
  const listed = optionalFlag(context.args, 'reset');
  if (listed === undefined) return {};
  const resets: Partial<Record<'prefix' | 'region' | 'ca_certificate', null>> = {};
  for (const name of listed.split(',').map((part) => part.trim())) {
    if (!Object.hasOwn(RESETTABLE, name))
      throw new UsageError(
        `--reset takes prefix, region or ca-file (comma-separated), not ${JSON.stringify(name)}`,
      );
    const field = RESETTABLE[name as keyof typeof RESETTABLE];
    if (context.args.flags.has(name))
      throw new UsageError(`--${name} and --reset ${name} contradict each other`);
    resets[field] = null;
  }
  return resets;
}

/** The fields the flags given change: a flag left out leaves its field as stored. */
async function changesOf(context: CommandContext): Promise<TargetChanges> {
  const { args } = context;
  const caFile = optionalFlag(args, 'ca-file');
  const changes: TargetChanges = { ...resetsOf(context) };
  for (const [flag, field] of [
    ['endpoint', 'endpoint'],
    ['bucket', 'bucket'],
    ['prefix', 'prefix'],
    ['region', 'region'],
  ] as const) {
    const value = optionalFlag(args, flag);
    if (value !== undefined) changes[field] = value;
  }
  if (caFile !== undefined) changes.ca_certificate = await readFile(caFile, 'utf8');
  return { ...changes, ...(await credentialsOf(context)) };
}

/**
 * `set`: a PATCH of the fields given (docs/backups.md#a-customers-own-target), so changing one
 * field needs no other; when the customer has no target yet, a PUT creates it from the flags
 * (endpoint and bucket required, defaults for the rest).
 */
async function setTarget(context: CommandContext, customer: string): Promise<Record<string, unknown>> {
  const changes = await changesOf(context);
  if (Object.keys(changes).length === 0)
    throw new UsageError('backups target set needs at least one field to change (--endpoint, --bucket, …)');
  const client = context.client();
  const path = { params: { path: { id: customer } } };
  try {
    return await must(client.api.PATCH('/api/customers/{id}/backup-target', { ...path, body: changes }));
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 404) throw error;
    const { endpoint, bucket, prefix, region, ...rest } = changes;
    if (endpoint === undefined || bucket === undefined)
      throw new CliError(
        `${error.message} (to create one, give --endpoint, --bucket, --access-key-id and --secret-key-stdin)`,
        EXIT.failed,
      );
    // No target yet (or no such customer: the PUT's answer says so). A reset field is a default already.
    const body = {
      endpoint,
      bucket,
      ...rest,
      ...(prefix != null ? { prefix } : {}),
      ...(region != null ? { region } : {}),
    };
    return must(client.api.PUT('/api/customers/{id}/backup-target', { ...path, body }));
  }
}

/**
 * `backups target show|set|unset CUSTOMER` (docs/backups.md#a-customers-own-target). The secret
 * key is read from standard input only (`--secret-key-stdin`): an argument would sit in the shell
 * history and in every `ps` listing. Left out, the stored key pair is kept (credentialsOf).
 */
export const backupTarget: ClientCommand = async (context) => {
  const { args } = context;
  const [verb = '', customer = ''] = operands(args, 2, ['show|set|unset', 'CUSTOMER']);
  if (verb === 'show' || verb === 'unset') {
    assertKnownFlags(args, []);
    const client = context.client();
    const path = { params: { path: { id: customer } } };
    if (verb === 'show')
      print(context, await must(client.api.GET('/api/customers/{id}/backup-target', path)));
    else {
      await must(client.api.DELETE('/api/customers/{id}/backup-target', path));
      context.out(`customer ${customer} has no backup target of its own: new backups go to the operator's`);
    }
    return EXIT.ok;
  }
  if (verb !== 'set')
    throw new UsageError(`backups target takes show, set or unset, not ${JSON.stringify(verb)}`);
  assertKnownFlags(args, SET_FLAGS);
  print(context, await setTarget(context, customer));
  return EXIT.ok;
};
