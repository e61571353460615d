import { must } from '@hostctl/api-client';
import { assertKnownFlags, UsageError } from '../args.js';
import { printJson, type ClientCommand } from '../client/context.js';
import { resolveSchedule } from '../client/resolve-schedule.js';
import { resolveService } from '../client/resolve-service.js';
import { EXIT } from '../exit-codes.js';
import { followRun } from './run.commands.js';
import { pageQuery, printRunsPage } from './runs.commands.js';

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
  const query = pageQuery(context.args);
  const client = context.client();
  const service = await resolveService(client, serviceRef);
  const page = ref
    ? await must(
        client.api.GET('/api/schedules/{id}/runs', {
          params: { path: { id: (await resolveSchedule(client, service, ref)).id }, query },
        }),
      )
    : await must(client.api.GET('/api/services/{id}/runs', { params: { path: { id: service.id }, query } }));
  return printRunsPage(context, page);
};
