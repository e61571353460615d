import { must, type JobRun, type JobRunSummary } from '@hostctl/api-client';
import { assertKnownFlags, integerFlag, operands, type ParsedArgs } from '../args.js';
import type { ApiClient } from '../client/api-client.js';
import {
  cellText,
  commandText,
  formatTable,
  printJson,
  type ClientCommand,
  type CommandContext,
} from '../client/context.js';
import { resolveService } from '../client/resolve-service.js';
import { EXIT } from '../exit-codes.js';
import { followRun } from './run.commands.js';

// A run after the fact (docs/jobs.md#hostctl-runs): `hostctl runs get RUN` and `hostctl runs list
// SERVICE`. `hostctl run` starts one; `schedules runs` lists one schedule's.

/** What started a run, in a word or two (as the dashboard's Jobs tab says it). */
function trigger(run: JobRunSummary): string {
  if (run.schedule_id === null) return 'one-off';
  if (run.scheduled_for === null) return 'run-now';
  return run.attempt > 1 ? `retry ${run.attempt - 1}` : 'scheduled';
}

/** 812 ms, 3.2 s, 125.0 s: how long a run took; a run that did not run has none. */
function durationText(ms: number | null): string {
  if (ms === null) return '-';
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** `--page` and `--per-page` as the API takes them. */
export const pageQuery = (args: ParsedArgs) => ({
  page: integerFlag(args, 'page'),
  per_page: integerFlag(args, 'per-page', 100),
});

/** A history page as a table (newest first, without output), or the API's page with --json. */
export function printRunsPage(
  context: CommandContext,
  page: { data: JobRunSummary[]; total: number; page: number },
): number {
  if (context.json) {
    printJson(context, page);
    return EXIT.ok;
  }
  if (page.data.length === 0) context.out('no runs');
  else
    context.out(
      formatTable(
        page.data.map((run) => ({ ...run, trigger: trigger(run) })),
        ['id', 'status', 'exit_code', 'duration_ms', 'trigger', 'scheduled_for', 'started_at', 'error'],
      ),
    );
  if (page.total > page.data.length)
    context.err(`page ${page.page}: ${page.data.length} of ${page.total} runs (--page, --per-page)`);
  return EXIT.ok;
}

/**
 * `runs list SERVICE [--page N] [--per-page N]`: every run of the service, one-off and scheduled,
 * newest first, without output (`runs get RUN` shows it).
 */
export const listRuns: ClientCommand = async (context) => {
  assertKnownFlags(context.args, ['page', 'per-page']);
  const [ref = ''] = operands(context.args, 2, ['SERVICE']);
  const query = pageQuery(context.args);
  const client = context.client();
  const service = await resolveService(client, ref);
  return printRunsPage(
    context,
    await must(client.api.GET('/api/services/{id}/runs', { params: { path: { id: service.id }, query } })),
  );
};

const readRun = (client: ApiClient, id: string): Promise<JobRun> =>
  must(client.api.GET('/api/runs/{id}', { params: { path: { id } } }));

/**
 * `runs get RUN [--wait]`: one run with its status, exit code, duration and output. Reading it is
 * exit 0 whatever the run's outcome (1 a failed request, 5 no operate permission); with --wait it
 * follows the run to its end as `hostctl run` does and exits with the command's own exit code
 * (3 timed out or still going when the wait ran out, 4 cancelled).
 */
export const getRun: ClientCommand = async (context) => {
  assertKnownFlags(context.args, ['wait']);
  const [id = ''] = operands(context.args, 2, ['RUN']);
  const client = context.client();
  const current = await readRun(client, id);
  if (context.args.flags.get('wait') === true) return followRun(context, client, current, current.timeout);
  if (context.json) {
    printJson(context, current);
    return EXIT.ok;
  }
  const facts: [string, unknown][] = [
    ['id', current.id],
    ['status', current.status],
    ['exit_code', current.exit_code],
    ['duration', durationText(current.duration_ms)],
    ['trigger', trigger(current)],
    ['command', commandText(current.command)],
    ['component', current.component],
    ['service_id', current.service_id],
    ['schedule_id', current.schedule_id],
    ['scheduled_for', current.scheduled_for],
    ['created_at', current.created_at],
    ['started_at', current.started_at],
    ['finished_at', current.finished_at],
    ['error', current.error],
  ];
  for (const [key, value] of facts) context.out(`${key}: ${cellText(value)}`);
  if (current.output_truncated)
    context.err('hostctl: the output was longer than kept; only its end is shown');
  const final = !['queued', 'running'].includes(current.status);
  if (current.output !== '') context.out(`output:\n${current.output.replace(/\n$/, '')}`);
  else context.out(final ? 'output: (none)' : 'output: (shown once the run ends)');
  return EXIT.ok;
};
