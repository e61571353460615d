import { useQuery, type QueryClient } from '@tanstack/react-query';
import { must, toProblem, type JsonBody, type JsonResponse } from '@hostctl/api-client';
import { api } from '../api/client.ts';

export type VariableGroup = JsonResponse<'/api/variable-groups/{id}', 'get'>;
/** A list row: names and the number of services using it, never a value. */
export type GroupListItem = JsonResponse<'/api/variable-groups', 'get'>['data'][number];
type GroupChange = JsonBody<'/api/variable-groups/{id}', 'patch'>;

/** SERVICE_NAME_PATTERN of @hostctl/domain, as an input pattern (the API checks it anyway). */
export const GROUP_NAME_PATTERN = '[a-z0-9][a-z0-9\\-]{1,61}[a-z0-9]';

/** Every query about variable groups starts with this key, so one invalidation refreshes them all. */
export const GROUPS_KEY = 'variable-groups';
export const groupKey = (id: string) => [GROUPS_KEY, 'one', id] as const;

const fetchGroup = (id: string) => must(api.GET('/api/variable-groups/{id}', { params: { path: { id } } }));

/**
 * One group as its page read it. Fetched afresh on each visit (nothing kept after the page closes)
 * and never refetched behind the reader's back: the edits send this version as If-Match, and a
 * group changed meanwhile must show as a 412 to reload, never as a silent swap of the form under
 * the cursor.
 */
export function useGroup(id: string) {
  return useQuery({
    queryKey: groupKey(id),
    queryFn: () => fetchGroup(id),
    staleTime: Number.POSITIVE_INFINITY,
    gcTime: 0,
    refetchOnWindowFocus: false,
  });
}

/** After a change: the lists read again; the open page keeps the version it saved. */
export function refreshGroupLists(queries: QueryClient): Promise<void> {
  return queries.invalidateQueries({
    predicate: (query) => query.queryKey[0] === GROUPS_KEY && query.queryKey[1] !== 'one',
  });
}

/** The services a group is attached to (no values: cheap to list on every row). */
export function useGroupServices(id: string, enabled = true) {
  return useQuery({
    queryKey: [GROUPS_KEY, 'services', id],
    queryFn: () => must(api.GET('/api/variable-groups/{id}/services', { params: { path: { id } } })),
    enabled,
  });
}

/** A customer's groups (at most 50 per customer, so one page of 100 holds them all). */
export function useCustomerGroups(customerId: string) {
  return useQuery({
    queryKey: [GROUPS_KEY, 'customer', customerId],
    queryFn: () =>
      must(
        api.GET('/api/variable-groups', { params: { query: { customer_id: customerId, per_page: 100 } } }),
      ),
  });
}

/** A conditional change: If-Match names the version the page shows (the ETag is the quoted version). */
export function patchGroup(group: Pick<VariableGroup, 'id' | 'version'>, body: GroupChange) {
  return must(
    api.PATCH('/api/variable-groups/{id}', {
      params: { path: { id: group.id } },
      body,
      headers: { 'If-Match': `"${group.version}"` },
    }),
  );
}

/**
 * Attaches a group to a service (at `position`, 1-based; default last; an attached group moves) or
 * detaches it, with If-Match naming the group's version as the list showed it: a group changed
 * since is a 412, and a concurrent change of the service's list is merged by the API, never lost.
 */
export function changeAttachment(
  change: { verb: 'attach' | 'detach'; group: { id: string; version?: number } },
  serviceId: string,
  position?: number,
) {
  const { id, version } = change.group;
  const options = {
    params: { path: { id } },
    headers: version === undefined ? {} : { 'If-Match': `"${version}"` },
  };
  return change.verb === 'attach'
    ? must(
        api.POST('/api/variable-groups/{id}/attach', {
          ...options,
          body: { service_id: serviceId, ...(position !== undefined ? { position } : {}) },
        }),
      )
    : must(api.POST('/api/variable-groups/{id}/detach', { ...options, body: { service_id: serviceId } }));
}

/** The API's 412: the group changed since this page read it (docs/secrets.md#variable-groups). */
export function isStale(error: unknown): boolean {
  if (error === null || error === undefined) return false;
  const problem = toProblem(error);
  return problem.status === 412 || problem.code === 'precondition_failed';
}
