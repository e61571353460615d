import { must, type ServiceSummary } from '@hostctl/api-client';
import { CliError, EXIT } from '../exit-codes.js';
import { ApiError, type ApiClient } from './api-client.js';

export interface ServiceRef {
  id: string;
  name: string;
}

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const PER_PAGE = 100;

/**
 * SERVICE on the command line is an id or a name. An id is looked up directly; a name through the
 * list's search (a substring match), keeping exact matches only. No match, or more than one (two
 * customers' services an unscoped key sees), is a configuration error (exit 2): a pipeline must
 * never act on a service it did not name unambiguously.
 */
export async function resolveService(client: ApiClient, ref: string): Promise<ServiceRef> {
  if (UUID.test(ref)) {
    try {
      const found = await must(client.api.GET('/api/services/{id}', { params: { path: { id: ref } } }));
      return { id: found.id, name: found.name };
    } catch (error) {
      if (!(error instanceof ApiError) || error.status !== 404) throw error;
      // a name may look like an id: fall through to the name lookup
    }
  }
  const matches: ServiceSummary[] = [];
  for (let page = 1; ; page++) {
    const list = await must(
      client.api.GET('/api/services', { params: { query: { search: ref, per_page: PER_PAGE, page } } }),
    );
    matches.push(...list.data.filter((service) => service.name === ref));
    if (page * PER_PAGE >= list.total || list.data.length === 0) break;
  }
  const [first, second] = matches;
  if (!first)
    throw new CliError(
      `no service named or with id ${JSON.stringify(ref)} is visible to this token`,
      EXIT.usage,
    );
  if (second)
    throw new CliError(
      `${matches.length} services are named ${JSON.stringify(ref)} (${matches
        .map((service) => `${service.id}${service.customer_id ? ` of customer ${service.customer_id}` : ''}`)
        .join(', ')}); name one by its id`,
      EXIT.usage,
    );
  return { id: first.id, name: first.name };
}
