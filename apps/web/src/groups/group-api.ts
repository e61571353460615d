import { useQuery, type QueryClient } from '@tanstack/react-query';
import { must, toProblem, type JsonBody, type JsonResponse } from '@hostctl/api-client';
import { api } from '../api/client.ts';

export type VariableGroup = JsonResponse<'/api/variable-groups/{id}', 'get'>;
type GroupChange = JsonBody<'/api/variable-groups/{id}', 'patch'>;

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

/** A group for a list row (its variable names): a cache of its own, refreshed as usual. */
export function useGroupRow(id: string) {
  return useQuery({ queryKey: [GROUPS_KEY, 'row', id], queryFn: () => fetchGroup(id) });
}

/** After a change: the lists and rows read again; the open page keeps the version it saved. */
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

/** The API's 412: the group changed since this page read it (docs/secrets.md#variable-groups). */
export function isStale(error: unknown): boolean {
  if (error === null || error === undefined) return false;
  const problem = toProblem(error);
  return problem.status === 412 || problem.code === 'precondition_failed';
}
