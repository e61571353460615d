import { must, type JsonBody, type JsonResponse } from '@hostctl/api-client';
import { assertKnownFlags, operands } from '../args.js';
import { printJson, type ClientCommand, type CommandContext } from '../client/context.js';
import { resolveService } from '../client/resolve-service.js';
import { EXIT, type ExitCode } from '../exit-codes.js';
import { followDeployment } from './deploy.commands.js';
import { changesToSet, changesToUnset, namesToUnset } from './variable-changes.js';

// A service's own variables after create (docs/secrets.md#secret-variables): `services set`,
// `unset` and `reveal`, the counterparts of `groups set|unset|reveal`. A change is a PATCH, which
// redeploys the service; `--wait` follows that deployment as `deploy --wait` does.

type ServiceChange = JsonBody<'/api/services/{id}', 'patch'>;
type ServiceUpdated = JsonResponse<'/api/services/{id}', 'patch'>;

const CHANGE_FLAGS = ['wait', 'timeout'] as const;

async function patchService(context: CommandContext, id: string, body: ServiceChange) {
  return must(context.client().api.PATCH('/api/services/{id}', { params: { path: { id } }, body }));
}

/** Names only, never a value: the output of a CI job is often kept and shown to many. */
function reportUpdate(
  context: CommandContext,
  updated: ServiceUpdated,
  done: string,
): Promise<ExitCode> | ExitCode {
  if (context.args.flags.get('wait') === true)
    return followDeployment(context, updated.deploy_job_id, updated.name);
  if (context.json) printJson(context, updated);
  else context.out(`service ${updated.name}: ${done}; deployment ${updated.deploy_job_id}`);
  return EXIT.ok;
}

/** `services set SERVICE --var K=V… --secret K=V… [--secret-stdin NAME]`: merged into the service's. */
export const setServiceVariables: ClientCommand = async (context) => {
  assertKnownFlags(context.args, ['var', 'secret', 'secret-stdin', ...CHANGE_FLAGS]);
  const [ref = ''] = operands(context.args, 2, ['SERVICE']);
  const body: ServiceChange = await changesToSet(context);
  const service = await resolveService(context.client(), ref);
  const names = [...Object.keys(body.variables ?? {}), ...Object.keys(body.secret_variables ?? {})];
  return reportUpdate(context, await patchService(context, service.id, body), `set ${names.join(', ')}`);
};

/**
 * `services unset SERVICE NAME…`: removes plain or secret variables by name, each from the map the
 * service's detail lists it in. A name that changed kind in between is refused by the API (a plain
 * removal never drops a secret), so the race costs an error, never the wrong removal.
 */
export const unsetServiceVariables: ClientCommand = async (context) => {
  assertKnownFlags(context.args, [...CHANGE_FLAGS]);
  const { ref, names } = namesToUnset(context, 'SERVICE');
  const client = context.client();
  const { id } = await resolveService(client, ref);
  const service = await must(client.api.GET('/api/services/{id}', { params: { path: { id } } }));
  const body: ServiceChange = changesToUnset(names, service, `service ${service.name}`);
  return reportUpdate(context, await patchService(context, id, body), `removed ${names.join(', ')}`);
};

/** `services reveal SERVICE NAME`: one secret value on stdout, alone, for a pipe (an audited read). */
export const revealServiceSecret: ClientCommand = async (context) => {
  assertKnownFlags(context.args, []);
  const [ref = '', name = ''] = operands(context.args, 2, ['SERVICE', 'NAME']);
  const client = context.client();
  const service = await resolveService(client, ref);
  const revealed = await must(
    client.api.POST('/api/services/{id}/secret-variables/reveal', {
      params: { path: { id: service.id } },
      body: { name },
    }),
  );
  if (context.json) printJson(context, revealed);
  else context.out(revealed.value);
  return EXIT.ok;
};
