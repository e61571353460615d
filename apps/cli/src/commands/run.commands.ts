import { must, type JobRun } from '@hostctl/api-client';
import { assertKnownFlags, integerFlag, optionalFlag, UsageError } from '../args.js';
import type { ApiClient } from '../client/api-client.js';
import { printJson, type ClientCommand, type CommandContext } from '../client/context.js';
import { resolveService } from '../client/resolve-service.js';
import { EXIT } from '../exit-codes.js';
import { streamRunOutput } from './run-stream.js';

/** The API's bounds (docs/jobs.md#limits): the run's own timeout, and how long one GET waits. */
const DEFAULT_RUN_TIMEOUT_S = 600;
const MAX_RUN_TIMEOUT_S = 3600;
const WAIT_PER_REQUEST_S = 30;
/** Beyond the run's timeout: queueing, pulling nothing, starting and removing the container. */
const WAIT_GRACE_S = 120;

const isFinal = (run: JobRun) => !['queued', 'running'].includes(run.status);

/**
 * `run SERVICE [--component C] [--timeout S] -- CMD ARGS…` (docs/jobs.md#hostctl-run): runs the
 * command once in a container of the service's current release, prints its output on stdout as it
 * is printed (run-stream.ts) and exits with the command's own exit code, so `hostctl run app --
 * ./migrate` gates a pipeline the way the command itself would. The CLI's own failures keep their
 * codes (docs/ci.md): 2 usage, 5 authentication or permission, 1 when the run could not start, 3
 * when the run was stopped at its timeout or the waiting ran out (the run then goes on).
 */
export const run: ClientCommand = async (context) => {
  assertKnownFlags(context.args, ['component', 'timeout']);
  const [ref, ...command] = context.args.positional.slice(1);
  if (!ref) throw new UsageError('missing SERVICE');
  if (command.length === 0) throw new UsageError('missing the command: hostctl run SERVICE -- CMD ARGS…');
  const component = optionalFlag(context.args, 'component');
  const timeout = integerFlag(context.args, 'timeout', MAX_RUN_TIMEOUT_S);
  if (timeout === 0) throw new UsageError('--timeout must be at least 1');
  const client = context.client();
  const service = await resolveService(client, ref);
  const current: JobRun = await must(
    client.api.POST('/api/services/{id}/runs', {
      params: { path: { id: service.id } },
      // Absent flags are undefined, which JSON leaves out: the API's defaults apply.
      body: { command, component, timeout },
    }),
  );
  context.err(`hostctl: run ${current.id} of ${service.name} ${current.status}`);
  const timeoutSeconds = timeout ?? DEFAULT_RUN_TIMEOUT_S;
  // --json prints the run as one document: nothing may be streamed before it.
  if (context.json) return followRun(context, client, current, timeoutSeconds);
  const deadline = deadlineOf(timeoutSeconds);
  const streamed = await streamRunOutput(context, client, current.id, deadline);
  // Without a stream (an older API, a proxy without WebSockets) the output is printed at the end.
  if (streamed === 'unavailable') return followRun(context, client, current, timeoutSeconds, { deadline });
  if (streamed === 'broken')
    context.err(
      `hostctl: the output stream broke off; \`hostctl runs get ${current.id}\` shows the stored output`,
    );
  return followRun(context, client, current, timeoutSeconds, { deadline, isOutputShown: true });
};

const deadlineOf = (timeoutSeconds: number) => Date.now() + (timeoutSeconds + WAIT_GRACE_S) * 1000;

/**
 * Waits for a run to be final (its timeout and a grace), prints its output on stdout (or the run
 * with --json) and its outcome on stderr, and returns the command's own exit code; 3 when the run
 * was stopped at its timeout or the waiting ran out, 4 when it was cancelled, 1 when it could not
 * start. Shared by `run` and `schedules run --wait`.
 */
export async function followRun(
  context: CommandContext,
  client: ApiClient,
  started: JobRun,
  timeoutSeconds: number,
  options: { deadline?: number; isOutputShown?: boolean } = {},
): Promise<number> {
  let current = started;
  const deadline = options.deadline ?? deadlineOf(timeoutSeconds);
  // At least one read: after a stream the run's final facts (status, exit code) come from here.
  let hasRead = false;
  while (!isFinal(current) && (!hasRead || Date.now() < deadline)) {
    hasRead = true;
    const wait = Math.max(1, Math.min(WAIT_PER_REQUEST_S, Math.ceil((deadline - Date.now()) / 1000)));
    current = await must(
      client.api.GET('/api/runs/{id}', { params: { path: { id: current.id }, query: { wait } } }),
    );
  }
  if (context.json) printJson(context, current);
  else if (!options.isOutputShown && current.output !== '') context.out(current.output.replace(/\n$/, ''));
  if (!isFinal(current)) {
    context.err(`hostctl: stopped waiting; run ${current.id} is still ${current.status} and goes on`);
    return EXIT.timedOut;
  }
  if (current.output_truncated && !options.isOutputShown)
    context.err('hostctl: the output was longer than kept; only its end is shown');
  const took = current.duration_ms === null ? '' : ` in ${current.duration_ms} ms`;
  context.err(
    `hostctl: run ${current.id} ${current.status}${current.exit_code === null ? '' : ` (exit code ${current.exit_code})`}${took}${current.error ? `: ${current.error}` : ''}`,
  );
  if (current.status === 'timed_out') return EXIT.timedOut;
  // Only a schedule's run is cancelled (a newer one replaced it, or its schedule was deleted).
  if (current.status === 'cancelled') return EXIT.notApplied;
  return current.exit_code ?? EXIT.failed;
}
