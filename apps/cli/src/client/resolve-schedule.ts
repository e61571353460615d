import { must, type Schedule } from '@hostctl/api-client';
import { CliError, EXIT } from '../exit-codes.js';
import type { ApiClient } from './api-client.js';
import type { ServiceRef } from './resolve-service.js';

/**
 * SCHEDULE on the command line is an id or a name of one of SERVICE's schedules (names are unique
 * within a service, and a service has at most 20, so one list answers it). One the service does not
 * have is a configuration error (exit 2), as an unknown SERVICE is: a pipeline must never act on a
 * schedule it did not name, and an id of another service's schedule is not taken even when visible.
 */
export async function resolveSchedule(
  client: ApiClient,
  service: ServiceRef,
  ref: string,
): Promise<Schedule> {
  const list = await must(
    client.api.GET('/api/services/{id}/schedules', { params: { path: { id: service.id } } }),
  );
  const found = list.data.find((schedule) => schedule.id === ref) ?? list.data.find((s) => s.name === ref);
  if (!found)
    throw new CliError(
      `service ${service.name} has no schedule named or with id ${JSON.stringify(ref)}${
        list.data.length > 0 ? ` (it has ${list.data.map((s) => s.name).join(', ')})` : ''
      }`,
      EXIT.usage,
    );
  return found;
}
