import { readFile } from 'node:fs/promises';
import { must } from '@hostctl/api-client';
import { UsageError, assertKnownFlags, operands, optionalFlag, requireFlag } from '../args.js';
import { cellText, printJson, type ClientCommand, type CommandContext } from '../client/context.js';
import { EXIT } from '../exit-codes.js';

const SET_FLAGS = ['endpoint', 'bucket', 'prefix', 'region', 'access-key-id', 'secret-key-stdin', 'ca-file'];

function print(context: CommandContext, target: Record<string, unknown>): void {
  if (context.json) printJson(context, target);
  else for (const [key, value] of Object.entries(target)) context.out(`${key}: ${cellText(value)}`);
}

/**
 * `backups target show|set|unset CUSTOMER` (docs/backups.md#a-customers-own-target). The secret
 * key is read from standard input only (`--secret-key-stdin`): an argument would sit in the shell
 * history and in every `ps` listing.
 */
export const backupTarget: ClientCommand = async (context) => {
  const { args } = context;
  const [verb = '', customer = ''] = operands(args, 2, ['show|set|unset', 'CUSTOMER']);
  const client = context.client();
  const path = { params: { path: { id: customer } } };
  if (verb === 'show' || verb === 'unset') {
    assertKnownFlags(args, []);
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
  if (args.flags.get('secret-key-stdin') !== true)
    throw new UsageError('--secret-key-stdin is required: the secret access key is read from standard input');
  const secret = (await context.readStdin()).trim();
  if (secret === '') throw new UsageError('standard input held no secret access key');
  const caFile = optionalFlag(args, 'ca-file');
  const prefix = optionalFlag(args, 'prefix');
  const region = optionalFlag(args, 'region');
  const target = await must(
    client.api.PUT('/api/customers/{id}/backup-target', {
      ...path,
      body: {
        endpoint: requireFlag(args, 'endpoint'),
        bucket: requireFlag(args, 'bucket'),
        access_key_id: requireFlag(args, 'access-key-id'),
        secret_access_key: secret,
        ...(prefix !== undefined ? { prefix } : {}),
        ...(region !== undefined ? { region } : {}),
        ...(caFile !== undefined ? { ca_certificate: await readFile(caFile, 'utf8') } : {}),
      },
    }),
  );
  print(context, target);
  return EXIT.ok;
};
