import { must, type JsonBody, type JsonResponse } from '@hostctl/api-client';
import { assertKnownFlags, integerFlag, operands, UsageError } from '../args.js';
import type { ApiClient } from '../client/api-client.js';
import { printJson, type ClientCommand, type CommandContext } from '../client/context.js';
import { resolveGroup } from '../client/resolve-group.js';
import { resolveService } from '../client/resolve-service.js';
import { CliError, EXIT } from '../exit-codes.js';
import { parseVariables } from './services.commands.js';
import { secretsFrom } from './groups.commands.js';

type GroupChange = JsonBody<'/api/variable-groups/{id}', 'patch'>;
type GroupUpdated = JsonResponse<'/api/variable-groups/{id}', 'patch'>;

/**
 * `--if-version N` makes the change conditional (If-Match: "N", docs/secrets.md#variable-groups):
 * a group changed since version N is a 412 and nothing is written. Without it the API merges the
 * change into the current version, which loses no other write either.
 */
function ifMatch(context: CommandContext, fallback?: number): { 'If-Match'?: string } {
  const version = integerFlag(context.args, 'if-version') ?? fallback;
  return version === undefined ? {} : { 'If-Match': `"${version}"` };
}

async function patchGroup(context: CommandContext, id: string, body: GroupChange, version?: number) {
  return must(
    context.client().api.PATCH('/api/variable-groups/{id}', {
      params: { path: { id } },
      body,
      headers: ifMatch(context, version),
    }),
  );
}

function reportUpdate(context: CommandContext, updated: GroupUpdated): void {
  if (context.json) return printJson(context, updated);
  context.out(`variable group ${updated.name} is now version ${updated.version}`);
  const affected = updated.affected_services.map((service) => service.name);
  if (affected.length > 0)
    context.err(
      `services using it get the change at their next deployment: ${affected.join(', ')} (hostctl groups redeploy ${updated.name})`,
    );
}

/** `groups set GROUP --var K=V… --secret K=V… [--secret-stdin NAME]`: merged into the group. */
export const setGroupVariables: ClientCommand = async (context) => {
  assertKnownFlags(context.args, ['var', 'secret', 'secret-stdin', 'if-version']);
  const [ref = ''] = operands(context.args, 2, ['GROUP']);
  const variables = parseVariables(context.args.repeated.get('var') ?? []);
  const secrets = await secretsFrom(context);
  if (Object.keys(variables).length + Object.keys(secrets).length === 0)
    throw new UsageError('nothing to set: give --var NAME=VALUE, --secret NAME=VALUE or --secret-stdin NAME');
  const group = await resolveGroup(context.client(), ref);
  const body: GroupChange = {
    variables: Object.keys(variables).length > 0 ? variables : undefined,
    secret_variables: Object.keys(secrets).length > 0 ? secrets : undefined,
  };
  reportUpdate(context, await patchGroup(context, group.id, body));
  return EXIT.ok;
};

/**
 * `groups unset GROUP NAME…`: removes plain or secret variables by name. The names are sorted into
 * the two maps from the version read, and the removal is conditional on that version, so a name
 * that changed kind meanwhile is a 412 rather than a removal of the wrong thing.
 */
export const unsetGroupVariables: ClientCommand = async (context) => {
  assertKnownFlags(context.args, ['if-version']);
  const names = context.args.positional.slice(3);
  operands(context.args, 2, ['GROUP', ...names.map(() => 'NAME')]);
  if (names.length === 0) throw new UsageError('missing NAME');
  const client = context.client();
  const { id } = await resolveGroup(client, context.args.positional[2] ?? '');
  const group = await must(client.api.GET('/api/variable-groups/{id}', { params: { path: { id } } }));
  const unknown = names.filter((name) => !(name in group.variables) && !(name in group.secret_variables));
  if (unknown.length > 0)
    throw new CliError(`variable group ${group.name} has no variable ${unknown.join(', ')}`, EXIT.usage);
  const removed = (map: object) =>
    Object.fromEntries(names.filter((name) => name in map).map((name) => [name, null]));
  const variables = removed(group.variables);
  const secrets = removed(group.secret_variables);
  const body: GroupChange = {
    variables: Object.keys(variables).length > 0 ? variables : undefined,
    secret_variables: Object.keys(secrets).length > 0 ? secrets : undefined,
  };
  reportUpdate(context, await patchGroup(context, id, body, group.version));
  return EXIT.ok;
};

async function serviceGroups(client: ApiClient, ref: string) {
  const service = await resolveService(client, ref);
  const detail = await must(client.api.GET('/api/services/{id}', { params: { path: { id: service.id } } }));
  return { service, attached: detail.variable_groups };
}

async function saveServiceGroups(context: CommandContext, serviceId: string, next: string[]) {
  return must(
    context.client().api.PATCH('/api/services/{id}', {
      params: { path: { id: serviceId } },
      body: { variable_groups: next },
    }),
  );
}

/**
 * `groups attach GROUP SERVICE [--position N]`: the group into the service's ordered list (last by
 * default; position 1 is applied first, so a later group wins). Moves it when already attached.
 * Changing the list redeploys the service.
 */
export const attachGroup: ClientCommand = async (context) => {
  assertKnownFlags(context.args, ['position']);
  const [groupRef = '', serviceRef = ''] = operands(context.args, 2, ['GROUP', 'SERVICE']);
  const client = context.client();
  const group = await resolveGroup(client, groupRef);
  const { service, attached } = await serviceGroups(client, serviceRef);
  const others = attached.filter((id) => id !== group.id);
  const position = integerFlag(context.args, 'position', 100) ?? others.length + 1;
  if (position < 1) throw new UsageError('--position counts from 1');
  const next = [...others];
  next.splice(Math.min(position, others.length + 1) - 1, 0, group.id);
  if (next.join() === attached.join()) {
    context.err(`${group.name} is already attached to ${service.name} at that position; nothing changed`);
    if (context.json) printJson(context, { service_id: service.id, variable_groups: attached });
    return EXIT.ok;
  }
  const updated = await saveServiceGroups(context, service.id, next);
  if (context.json)
    printJson(context, {
      service_id: service.id,
      variable_groups: updated.variable_groups,
      deploy_job_id: updated.deploy_job_id,
    });
  else
    context.out(
      `${group.name} attached to ${service.name} at position ${next.indexOf(group.id) + 1} of ${next.length}; deployment ${updated.deploy_job_id}`,
    );
  return EXIT.ok;
};

/** `groups detach GROUP SERVICE`: out of the service's list (nothing to do when it is not in it). */
export const detachGroup: ClientCommand = async (context) => {
  assertKnownFlags(context.args, []);
  const [groupRef = '', serviceRef = ''] = operands(context.args, 2, ['GROUP', 'SERVICE']);
  const client = context.client();
  const group = await resolveGroup(client, groupRef);
  const { service, attached } = await serviceGroups(client, serviceRef);
  if (!attached.includes(group.id)) {
    context.err(`${group.name} is not attached to ${service.name}; nothing changed`);
    if (context.json) printJson(context, { service_id: service.id, variable_groups: attached });
    return EXIT.ok;
  }
  const updated = await saveServiceGroups(
    context,
    service.id,
    attached.filter((id) => id !== group.id),
  );
  if (context.json)
    printJson(context, {
      service_id: service.id,
      variable_groups: updated.variable_groups,
      deploy_job_id: updated.deploy_job_id,
    });
  else context.out(`${group.name} detached from ${service.name}; deployment ${updated.deploy_job_id}`);
  return EXIT.ok;
};
