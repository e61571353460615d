import { readFileSync } from 'node:fs';
import { must, type NewService, type Query } from '@hostctl/api-client';
import { assertKnownFlags, integerFlag, operands, optionalFlag, requireFlag, UsageError } from '../args.js';
import { resolveService } from '../client/resolve-service.js';
import {
  cellText,
  formatTable,
  printJson,
  type ClientCommand,
  type CommandContext,
} from '../client/context.js';
import { EXIT } from '../exit-codes.js';
import { followDeployment, idempotencyHeader } from './deploy.commands.js';

type ServiceListQuery = Query<'/api/services', 'get'>;

export const listServices: ClientCommand = async (context) => {
  const { args } = context;
  assertKnownFlags(args, ['status', 'customer', 'search', 'sort', 'order', 'page', 'per-page']);
  operands(args, 2, []);
  // Enumerated values go as given: the API checks them and its problem names the bad one.
  const query: ServiceListQuery = {
    status: optionalFlag(args, 'status') as ServiceListQuery['status'],
    customer_id: optionalFlag(args, 'customer'),
    search: optionalFlag(args, 'search'),
    sort: optionalFlag(args, 'sort') as ServiceListQuery['sort'],
    order: optionalFlag(args, 'order') as ServiceListQuery['order'],
    page: integerFlag(args, 'page'),
    per_page: integerFlag(args, 'per-page', 100),
  };
  const page = await must(context.client().api.GET('/api/services', { params: { query } }));
  if (context.json) printJson(context, page);
  else {
    context.out(formatTable(page.data, ['id', 'name', 'status', 'deploy_method', 'url']));
    if (page.total > page.data.length)
      context.err(`page ${page.page}: ${page.data.length} of ${page.total} services (--page, --per-page)`);
  }
  return EXIT.ok;
};

export const getService: ClientCommand = async (context) => {
  assertKnownFlags(context.args, []);
  const [ref = ''] = operands(context.args, 2, ['SERVICE']);
  const client = context.client();
  const { id } = await resolveService(client, ref);
  const service = await must(client.api.GET('/api/services/{id}', { params: { path: { id } } }));
  if (context.json) printJson(context, service);
  else printServiceDetail(context, service);
  return EXIT.ok;
};

/** Variable values may be secrets: text output names them only (--json shows the API's answer). */
function printServiceDetail(context: CommandContext, service: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(service)) {
    if (key === 'compose') continue;
    if (key === 'variables' && value && typeof value === 'object') {
      const names = Object.keys(value);
      context.out(
        `variables: ${names.length === 0 ? '(none)' : `${names.join(', ')} (values hidden; --json shows them)`}`,
      );
    } else if (key === 'secret_variables' && value && typeof value === 'object') {
      const names = Object.keys(value);
      context.out(`secret_variables: ${names.length === 0 ? '(none)' : `${names.join(', ')} (write-only)`}`);
    } else context.out(`${key}: ${cellText(value)}`);
  }
}

/** `--compose-file FILE` (or `-` for stdin), `--var NAME=VALUE` and `--secret NAME=VALUE` repeated. */
export const createService: ClientCommand = async (context) => {
  const { args } = context;
  assertKnownFlags(args, [
    'name',
    'customer',
    'method',
    'compose-file',
    'template',
    'var',
    'secret',
    'git-url',
    'git-branch',
    'ai-url',
    'wait',
    'timeout',
    'idempotency-key',
  ]);
  operands(args, 2, []);
  const composeFile = optionalFlag(args, 'compose-file');
  const method = optionalFlag(args, 'method') ?? (composeFile !== undefined ? 'compose' : undefined);
  if (method === undefined) throw new UsageError('--method compose|git|template|ai is required');
  const variables = parseVariables(args.repeated.get('var') ?? []);
  // Every field named here, so the typecheck holds each one to the API's schema; an absent flag is
  // undefined, which JSON leaves out (the API tells "absent" from "empty").
  // Write-only: the API never shows them back (docs/secrets.md#secret-variables).
  const secrets = parseVariables(args.repeated.get('secret') ?? []);
  const body: NewService = {
    name: requireFlag(args, 'name'),
    // As given, like the enumerated query values of `services list`: the API names a bad one.
    deploy_method: method as NewService['deploy_method'],
    customer_id: optionalFlag(args, 'customer'),
    template_id: optionalFlag(args, 'template'),
    git_url: optionalFlag(args, 'git-url'),
    git_branch: optionalFlag(args, 'git-branch'),
    ai_url: optionalFlag(args, 'ai-url'),
    variables: Object.keys(variables).length > 0 ? variables : undefined,
    secret_variables: Object.keys(secrets).length > 0 ? secrets : undefined,
  };
  if (composeFile !== undefined)
    body.compose = composeFile === '-' ? await context.readStdin() : readComposeFile(composeFile);
  const created = await must(
    context.client().api.POST('/api/services', { body, params: { header: idempotencyHeader(context) } }),
  );
  if (args.flags.get('wait') === true) return followDeployment(context, created.deploy_job_id, created.name);
  if (context.json) printJson(context, created);
  else
    context.out(
      `service ${created.name} (${created.id}) created at ${created.url}; deployment ${created.deploy_job_id}`,
    );
  return EXIT.ok;
};

function readComposeFile(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(
      `--compose-file: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
}

export function parseVariables(pairs: readonly string[]): Record<string, string> {
  const variables: Record<string, string> = {};
  for (const pair of pairs) {
    const equals = pair.indexOf('=');
    if (equals <= 0) throw new UsageError(`--var must be NAME=VALUE, not ${JSON.stringify(pair)}`);
    variables[pair.slice(0, equals)] = pair.slice(equals + 1);
  }
  return variables;
}

/** Deleting needs --yes: a pipeline with a mistyped name must not remove the wrong service. */
export const deleteService: ClientCommand = async (context) => {
  assertKnownFlags(context.args, ['yes']);
  const [ref = ''] = operands(context.args, 2, ['SERVICE']);
  const client = context.client();
  const service = await resolveService(client, ref);
  if (context.args.flags.get('yes') !== true)
    throw new UsageError(
      `deleting ${service.name} (${service.id}) removes its containers and volumes: add --yes`,
    );
  await must(client.api.DELETE('/api/services/{id}', { params: { path: { id: service.id } } }));
  if (context.json) printJson(context, { id: service.id, name: service.name, deleted: true });
  else context.out(`service ${service.name} (${service.id}) deleted`);
  return EXIT.ok;
};

const lifecycle =
  (action: 'start' | 'stop' | 'restart'): ClientCommand =>
  async (context) => {
    assertKnownFlags(context.args, []);
    const [ref = ''] = operands(context.args, 2, ['SERVICE']);
    const client = context.client();
    const service = await resolveService(client, ref);
    const result = await must(
      client.api.POST(`/api/services/{id}/${action}`, { params: { path: { id: service.id } } }),
    );
    if (context.json) printJson(context, result);
    else context.out(`${service.name}: ${result.message ?? result.status}`);
    return EXIT.ok;
  };

export const startService = lifecycle('start');
export const stopService = lifecycle('stop');
export const restartService = lifecycle('restart');
