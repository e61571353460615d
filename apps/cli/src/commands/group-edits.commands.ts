import { must, type JsonBody, type JsonResponse } from '@hostctl/api-client';
import { assertKnownFlags, integerFlag, operands, UsageError } from '../args.js';
import { printJson, type ClientCommand, type CommandContext } from '../client/context.js';
import { resolveGroup } from '../client/resolve-group.js';
import { resolveService } from '../client/resolve-service.js';
import { EXIT } from '../exit-codes.js';
import { changesToSet, changesToUnset, namesToUnset } from './variable-changes.js';

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
  const body: GroupChange = await changesToSet(context);
  const group = await resolveGroup(context.client(), ref);
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
  const { ref, names } = namesToUnset(context, 'GROUP');
  const client = context.client();
  const { id } = await resolveGroup(client, ref);
  const group = await must(client.api.GET('/api/variable-groups/{id}', { params: { path: { id } } }));
  const body: GroupChange = changesToUnset(names, group, `variable group ${group.name}`);
  reportUpdate(context, await patchGroup(context, id, body, group.version));
  return EXIT.ok;
};

type Attachment = JsonResponse<'/api/variable-groups/{id}/attach', 'post'>;

function reportAttachment(
  context: CommandContext,
  result: Attachment,
  names: { group: string; service: string; groupId: string },
  done: string,
  unchanged: string,
): void {
  if (context.json) return printJson(context, result);
  if (result.deploy_job_id === null)
    context.err(`${names.group} ${unchanged} ${names.service}; nothing changed`);
  else {
    const at = result.variable_groups.indexOf(names.groupId);
    const where = at >= 0 ? ` at position ${at + 1} of ${result.variable_groups.length}` : '';
    context.out(`${names.group} ${done} ${names.service}${where}; deployment ${result.deploy_job_id}`);
  }
}

/**
 * `groups attach GROUP SERVICE [--position N] [--if-version N]`: the group into the service's
 * ordered list (last by default; position 1 is applied first, so a later group wins); an attached
 * group moves. One request: the API merges concurrent attaches to one service, so none is lost, and
 * `--if-version` holds it to the group's version (412 if it changed). A change redeploys the service.
 */
export const attachGroup: ClientCommand = async (context) => {
  assertKnownFlags(context.args, ['position', 'if-version']);
  const [groupRef = '', serviceRef = ''] = operands(context.args, 2, ['GROUP', 'SERVICE']);
  const client = context.client();
  const group = await resolveGroup(client, groupRef);
  const service = await resolveService(client, serviceRef);
  const position = integerFlag(context.args, 'position', 100);
  if (position !== undefined && position < 1) throw new UsageError('--position counts from 1');
  const result = await must(
    client.api.POST('/api/variable-groups/{id}/attach', {
      params: { path: { id: group.id } },
      body: { service_id: service.id, ...(position !== undefined ? { position } : {}) },
      headers: ifMatch(context),
    }),
  );
  reportAttachment(
    context,
    result,
    { group: group.name, service: service.name, groupId: group.id },
    'attached to',
    'is already at that position in',
  );
  return EXIT.ok;
};

/** `groups detach GROUP SERVICE [--if-version N]`: out of the service's list (not in it: nothing to do). */
export const detachGroup: ClientCommand = async (context) => {
  assertKnownFlags(context.args, ['if-version']);
  const [groupRef = '', serviceRef = ''] = operands(context.args, 2, ['GROUP', 'SERVICE']);
  const client = context.client();
  const group = await resolveGroup(client, groupRef);
  const service = await resolveService(client, serviceRef);
  const result = await must(
    client.api.POST('/api/variable-groups/{id}/detach', {
      params: { path: { id: group.id } },
      body: { service_id: service.id },
      headers: ifMatch(context),
    }),
  );
  reportAttachment(
    context,
    result,
    { group: group.name, service: service.name, groupId: group.id },
    'detached from',
    'is not attached to',
  );
  return EXIT.ok;
};
