import { must, type JsonResponse } from '@hostctl/api-client';
import { assertKnownFlags, integerFlag, operands, optionalFlag } from '../args.js';
import { formatTable, printJson, type ClientCommand, type CommandContext } from '../client/context.js';
import { resolveService } from '../client/resolve-service.js';
import { waitForDeployment } from '../client/wait-deployment.js';
import { EXIT, exitCodeForStatus, type ExitCode } from '../exit-codes.js';

/** How long --wait waits without --timeout: longer than most builds, shorter than most CI job limits. */
export const DEFAULT_WAIT_SECONDS = 900;
const MAX_WAIT_SECONDS = 24 * 3600;

type DeployAccepted = JsonResponse<'/api/services/{id}/redeploy' | '/api/services/{id}/rollback', 'post'>;

const WAIT_FLAGS = ['wait', 'timeout', 'idempotency-key'] as const;

/**
 * `--idempotency-key K` (docs/idempotency.md): a pipeline that retries the command after a dropped
 * connection gets the same deployment back, and waits on it, instead of queueing a second one.
 */
export function idempotencyHeader(context: CommandContext): { 'Idempotency-Key'?: string } {
  const key = optionalFlag(context.args, 'idempotency-key');
  return key === undefined ? {} : { 'Idempotency-Key': key };
}

/** `deploy SERVICE`: a redeploy (latest image, or latest commit for git). */
export const deploy: ClientCommand = async (context) => {
  assertKnownFlags(context.args, WAIT_FLAGS);
  const [ref = ''] = operands(context.args, 1, ['SERVICE']);
  const client = context.client();
  const service = await resolveService(client, ref);
  const accepted = await must(
    client.api.POST('/api/services/{id}/redeploy', {
      params: { path: { id: service.id }, header: idempotencyHeader(context) },
    }),
  );
  return afterAccepted(context, accepted, service.name, 'redeploy');
};

/** `rollback SERVICE [--to DEPLOYMENT]`: back to the previous release, or to a named one. */
export const rollback: ClientCommand = async (context) => {
  assertKnownFlags(context.args, [...WAIT_FLAGS, 'to']);
  const [ref = ''] = operands(context.args, 1, ['SERVICE']);
  const client = context.client();
  const service = await resolveService(client, ref);
  const target = optionalFlag(context.args, 'to');
  const accepted = await must(
    client.api.POST('/api/services/{id}/rollback', {
      params: { path: { id: service.id }, header: idempotencyHeader(context) },
      // No body at all without --to (no content type either): the previous release.
      body: target === undefined ? undefined : { deployment_id: target },
    }),
  );
  return afterAccepted(context, accepted, service.name, 'rollback');
};

async function afterAccepted(
  context: CommandContext,
  accepted: DeployAccepted,
  serviceName: string,
  what: string,
): Promise<ExitCode> {
  if (context.args.flags.get('wait') === true)
    return followDeployment(context, accepted.deploy_job_id, serviceName);
  if (context.json) printJson(context, accepted);
  else context.out(`${what} of ${serviceName} queued: deployment ${accepted.deploy_job_id}`);
  return EXIT.ok;
}

/**
 * --wait: streams the deployment log to stderr and turns the outcome into the exit code. A time
 * out only stops the waiting; the deployment goes on in the worker, and the message says so.
 */
export async function followDeployment(
  context: CommandContext,
  deploymentId: string,
  serviceName: string,
): Promise<ExitCode> {
  const timeoutSeconds = integerFlag(context.args, 'timeout', MAX_WAIT_SECONDS) ?? DEFAULT_WAIT_SECONDS;
  context.err(`hostctl: waiting up to ${timeoutSeconds}s for deployment ${deploymentId} of ${serviceName}`);
  const result = await waitForDeployment(context.client(), deploymentId, {
    timeoutMs: timeoutSeconds * 1000,
    onLog: (line) => context.err(line.message),
    onStatus: (deployment) =>
      context.err(
        `hostctl: deployment ${deployment.status}${deployment.step ? ` (step ${deployment.step})` : ''}`,
      ),
  });
  if (result.outcome === 'timed_out') {
    const state = result.deployment
      ? `it is still ${result.deployment.status}${result.deployment.step ? ` at step ${result.deployment.step}` : ''}`
      : 'its state is unknown';
    context.err(
      `hostctl: stopped waiting after ${timeoutSeconds}s; deployment ${deploymentId} goes on (${state}).` +
        `${result.lastError ? ` Last error: ${result.lastError}.` : ''} Check it later with \`hostctl deployments ${serviceName}\`.`,
    );
    if (context.json)
      printJson(
        context,
        result.deployment ? stripLog(result.deployment) : { id: deploymentId, status: 'unknown' },
      );
    return EXIT.timedOut;
  }
  const { deployment } = result;
  const code = exitCodeForStatus(deployment.status);
  context.err(
    `hostctl: deployment ${deployment.id} ${deployment.status}${deployment.error ? `: ${deployment.error}` : ''}`,
  );
  if (context.json) printJson(context, deployment);
  return code;
}

/** Without its log (already streamed to stderr), so --json prints the deployment alone. */
function stripLog<T extends { id: string; logs?: unknown }>(deployment: T): Omit<T, 'logs'> {
  const { logs: _logs, ...rest } = deployment;
  return rest;
}

/** `cancel DEPLOYMENT`: 409 when the deployment is already final or replacing the release. */
export const cancel: ClientCommand = async (context) => {
  assertKnownFlags(context.args, []);
  const [id = ''] = operands(context.args, 1, ['DEPLOYMENT']);
  const deployment = await must(
    context.client().api.POST('/api/deployments/{id}/cancel', { params: { path: { id } } }),
  );
  if (context.json) printJson(context, stripLog(deployment));
  else context.out(`deployment ${deployment.id} ${deployment.status}`);
  return EXIT.ok;
};

/** `deployments SERVICE`: the release history, newest first. */
export const listDeployments: ClientCommand = async (context) => {
  assertKnownFlags(context.args, ['page', 'per-page']);
  const [ref = ''] = operands(context.args, 1, ['SERVICE']);
  const client = context.client();
  const service = await resolveService(client, ref);
  const page = await must(
    client.api.GET('/api/services/{id}/deployments', {
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
  else {
    context.out(formatTable(page.data, ['id', 'trigger', 'status', 'step', 'created_at', 'error']));
    if (page.total > page.data.length)
      context.err(`page ${page.page}: ${page.data.length} of ${page.total} deployments (--page, --per-page)`);
  }
  return EXIT.ok;
};
