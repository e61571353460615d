import { must, type JsonBody } from '@hostctl/api-client';
import { assertKnownFlags, integerFlag, operands, optionalFlag, requireFlag, UsageError } from '../args.js';
import { formatTable, printJson, type ClientCommand, type CommandContext } from '../client/context.js';
import { resolveGroup } from '../client/resolve-group.js';
import { EXIT } from '../exit-codes.js';
import { idempotencyHeader } from './deploy.commands.js';
import { parseVariables } from './services.commands.js';

// Variable groups (docs/secrets.md#variable-groups): `hostctl groups list|get|create|delete|reveal|
// redeploy` here, the edits (`set`, `unset`, `attach`, `detach`) in group-edits.commands.ts.

export const listGroups: ClientCommand = async (context) => {
  const { args } = context;
  assertKnownFlags(args, ['customer', 'page', 'per-page']);
  operands(args, 2, []);
  const query = {
    customer_id: optionalFlag(args, 'customer'),
    page: integerFlag(args, 'page'),
    per_page: integerFlag(args, 'per-page', 100),
  };
  const page = await must(context.client().api.GET('/api/variable-groups', { params: { query } }));
  if (context.json) printJson(context, page);
  else {
    context.out(
      formatTable(page.data, ['id', 'name', 'customer_id', 'version', 'service_count', 'updated_at']),
    );
    if (page.total > page.data.length)
      context.err(`page ${page.page}: ${page.data.length} of ${page.total} groups (--page, --per-page)`);
  }
  return EXIT.ok;
};

/** Text output names variables only (values may be secrets); --json is the API's answer. */
export const getGroup: ClientCommand = async (context) => {
  assertKnownFlags(context.args, []);
  const [ref = ''] = operands(context.args, 2, ['GROUP']);
  const client = context.client();
  const { id } = await resolveGroup(client, ref);
  const path = { params: { path: { id } } };
  const [group, services] = await Promise.all([
    must(client.api.GET('/api/variable-groups/{id}', path)),
    must(client.api.GET('/api/variable-groups/{id}/services', path)),
  ]);
  if (context.json) {
    printJson(context, group);
    return EXIT.ok;
  }
  const names = (map: object) => Object.keys(map).sort().join(', ') || '(none)';
  context.out(`id: ${group.id}`);
  context.out(`name: ${group.name}`);
  context.out(`customer_id: ${group.customer_id}`);
  context.out(`version: ${group.version}`);
  context.out(`updated_at: ${group.updated_at}`);
  context.out(
    `variables: ${names(group.variables)}${Object.keys(group.variables).length ? ' (values hidden; --json shows them)' : ''}`,
  );
  context.out(
    `secret_variables: ${names(group.secret_variables)}${Object.keys(group.secret_variables).length ? ' (write-only; groups reveal)' : ''}`,
  );
  context.out(`services: ${services.data.map((service) => service.name).join(', ') || '(none)'}`);
  return EXIT.ok;
};

/**
 * `--secret-stdin NAME`: one secret value from standard input (one trailing newline dropped), so it
 * appears in no process list or shell history, which `--secret NAME=VALUE` does.
 */
export async function secretsFrom(context: CommandContext): Promise<Record<string, string>> {
  const secrets = parseVariables(context.args.repeated.get('secret') ?? []);
  const fromStdin = optionalFlag(context.args, 'secret-stdin');
  if (fromStdin !== undefined) {
    const value = (await context.readStdin()).replace(/\r?\n$/, '');
    if (value === '') throw new UsageError(`--secret-stdin ${fromStdin}: standard input is empty`);
    secrets[fromStdin] = value;
  }
  return secrets;
}

type NewGroup = JsonBody<'/api/variable-groups', 'post'>;

export const createGroup: ClientCommand = async (context) => {
  const { args } = context;
  assertKnownFlags(args, ['name', 'customer', 'var', 'secret', 'secret-stdin', 'idempotency-key']);
  operands(args, 2, []);
  const variables = parseVariables(args.repeated.get('var') ?? []);
  const secrets = await secretsFrom(context);
  const body: NewGroup = {
    name: requireFlag(args, 'name'),
    customer_id: optionalFlag(args, 'customer'),
    variables: Object.keys(variables).length > 0 ? variables : undefined,
    secret_variables: Object.keys(secrets).length > 0 ? secrets : undefined,
  };
  const created = await must(
    context
      .client()
      .api.POST('/api/variable-groups', { body, params: { header: idempotencyHeader(context) } }),
  );
  if (context.json) printJson(context, created);
  else context.out(`variable group ${created.name} (${created.id}) created, version ${created.version}`);
  return EXIT.ok;
};

/** Deleting needs --yes; a group services still use is refused by the API (409 naming them). */
export const deleteGroup: ClientCommand = async (context) => {
  assertKnownFlags(context.args, ['yes']);
  const [ref = ''] = operands(context.args, 2, ['GROUP']);
  const client = context.client();
  const group = await resolveGroup(client, ref);
  if (context.args.flags.get('yes') !== true)
    throw new UsageError(`deleting variable group ${group.name} (${group.id}) cannot be undone: add --yes`);
  await must(client.api.DELETE('/api/variable-groups/{id}', { params: { path: { id: group.id } } }));
  if (context.json) printJson(context, { id: group.id, name: group.name, deleted: true });
  else context.out(`variable group ${group.name} (${group.id}) deleted`);
  return EXIT.ok;
};

/** `groups reveal GROUP NAME`: one secret value on stdout, alone, for a pipe (an audited read). */
export const revealGroupSecret: ClientCommand = async (context) => {
  assertKnownFlags(context.args, []);
  const [ref = '', name = ''] = operands(context.args, 2, ['GROUP', 'NAME']);
  const client = context.client();
  const group = await resolveGroup(client, ref);
  const revealed = await must(
    client.api.POST('/api/variable-groups/{id}/secret-variables/reveal', {
      params: { path: { id: group.id } },
      body: { name },
    }),
  );
  if (context.json) printJson(context, revealed);
  else context.out(revealed.value);
  return EXIT.ok;
};

/** `groups redeploy GROUP`: an ordinary redeploy of every service the group is attached to. */
export const redeployGroup: ClientCommand = async (context) => {
  assertKnownFlags(context.args, ['idempotency-key']);
  const [ref = ''] = operands(context.args, 2, ['GROUP']);
  const client = context.client();
  const group = await resolveGroup(client, ref);
  const result = await must(
    client.api.POST('/api/variable-groups/{id}/redeploy', {
      params: { path: { id: group.id }, header: idempotencyHeader(context) },
    }),
  );
  if (context.json) printJson(context, result);
  else if (result.data.length === 0) context.out(`variable group ${group.name} is attached to no service`);
  else context.out(formatTable(result.data, ['service_id', 'deploy_job_id']));
  return EXIT.ok;
};
