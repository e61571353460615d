import { must, type JsonResponse } from '@hostctl/api-client';
import { CliError, EXIT } from '../exit-codes.js';
import { ApiError, type ApiClient } from './api-client.js';

/** What both the list and the detail answer: enough to act on a group. */
type GroupSummary = Pick<
  JsonResponse<'/api/variable-groups', 'get'>['data'][number],
  'id' | 'customer_id' | 'name' | 'version'
>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const PER_PAGE = 100;

/**
 * GROUP on the command line is an id or a name, resolved like SERVICE (resolve-service.ts): an id
 * directly, a name by an exact match among the groups the key sees (the list has no search; a
 * customer has at most 50). No match, or one name in two customers, is exit 2: a pipeline must
 * never change a group it did not name unambiguously.
 */
export async function resolveGroup(client: ApiClient, ref: string): Promise<GroupSummary> {
  if (UUID.test(ref)) {
    try {
      return await must(client.api.GET('/api/variable-groups/{id}', { params: { path: { id: ref } } }));
    } catch (error) {
      if (!(error instanceof ApiError) || error.status !== 404) throw error;
      // a name may look like an id: fall through to the name lookup
    }
  }
  const matches: GroupSummary[] = [];
  for (let page = 1; ; page++) {
    const list = await must(
      client.api.GET('/api/variable-groups', { params: { query: { per_page: PER_PAGE, page } } }),
    );
    matches.push(...list.data.filter((group) => group.name === ref));
    if (page * PER_PAGE >= list.total || list.data.length === 0) break;
  }
  const [first, second] = matches;
  if (!first)
    throw new CliError(
      `no variable group named or with id ${JSON.stringify(ref)} is visible to this token`,
      EXIT.usage,
    );
  if (second)
    throw new CliError(
      `${matches.length} variable groups are named ${JSON.stringify(ref)} (${matches
        .map((group) => `${group.id} of customer ${group.customer_id}`)
        .join(', ')}); name one by its id`,
      EXIT.usage,
    );
  return first;
}
