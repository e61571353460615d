import { must, type JobRunSummary } from '@hostctl/api-client';
import { assertKnownFlags, integerFlag, UsageError } from '../args.js';
import { formatTable, printJson, type ClientCommand } from '../client/context.js';
import { resolveSchedule } from '../client/resolve-schedule.js';
import { resolveService } from '../client/resolve-service.js';
import { EXIT } from '../exit-codes.js';
import { followRun } from './run.commands.js';

/**
 * `schedules run SERVICE SCHEDULE [--wait]`: the schedule's command once, now, whatever its times
 * or `enabled`. Without --wait it prints the run's id (stdout) and exits 0 once the run is queued;
 * with --wait it follows the run as `hostctl run` does and exits with the command's exit code
 * (3 timed out, 4 cancelled: docs/jobs.md#hostctl-run).
 */
export const runSchedule: ClientCommand = async (context) => {
  assertKnownFlags(context.args, ['wait']);
  const [serviceRef, ref, ...rest] = context.args.positional.slice(2);
  if (!serviceRef || !ref) throw new UsageError(`missing ${serviceRef ? 'SCHEDULE' : 'SERVICE SCHEDULE'}`);
  if (rest.length > 0)
    throw new UsageError(
      `unexpected argument ${JSON.stringify(rest[0])}: a schedule runs its own command (hostctl run runs another)`,
    );
  const client = context.client();
  const schedule = await resolveSchedule(client, await resolveService(client, serviceRef), ref);
  const run = await must(
    client.api.POST('/api/schedules/{id}/run-now', { params: { path: { id: schedule.id } } }),
  );
  context.err(`hostctl: run ${run.id} of schedule ${schedule.name} ${run.status}`);
  if (context.args.flags.get('wait') === true) return followRun(context, client, run, schedule.timeout);
  if (context.json) printJson(context, run);
  else context.out(run.id);
  return EXIT.ok;
};

/** What started a run, in a word or two (as the dashboard's Jobs tab says it). */
function trigger(run: JobRunSummary): string {
  if (run.schedule_id === null) return 'one-off';
  if (run.scheduled_for === null) return 'run-now';
  return run.attempt > 1 ? `retry ${run.attempt - 1}` : 'scheduled';
}

/**
 * `schedules runs SERVICE [SCHEDULE] [--page N] [--per-page N]`: a schedule's runs and recorded
 * times (missed, skipped…), or without SCHEDULE every run of the service, one-off ones included;
 * newest first, without output (`hostctl schedules run --wait` and the dashboard show it).
 */
export const listScheduleRuns: ClientCommand = async (context) => {
  assertKnownFlags(context.args, ['page', 'per-page']);
  const [serviceRef, ref, ...rest] = context.args.positional.slice(2);
  if (!serviceRef) throw new UsageError('missing SERVICE');
  if (rest.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(rest[0])}`);
  const query = {
    page: integerFlag(context.args, 'page'),
    per_page: integerFlag(context.args, 'per-page', 100),
  };
  const client = context.client();
  const service = await resolveService(client, serviceRef);
  const page = ref
    ? await must(
        client.api.GET('/api/schedules/{id}/runs', {
          params: { path: { id: (await resolveSchedule(client, service, ref)).id }, query },
        }),
      )
    : await must(client.api.GET('/api/services/{id}/runs', { params: { path: { id: service.id }, query } }));
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
};
