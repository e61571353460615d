import { useQueries } from '@tanstack/react-query';
import { api } from './api/client.ts';
import { must } from '@hostctl/api-client';

/**
 * Names of the customers a page of rows refers to, fetched once per id and cached long (names
 * rarely change), so a list shows "Acme" instead of a UUID. An id whose name is not (yet) known
 * maps to undefined and the caller shows the id.
 */
export function useCustomerNames(ids: readonly string[], enabled: boolean): Map<string, string | undefined> {
  const distinct = [...new Set(ids)];
  const results = useQueries({
    queries: distinct.map((id) => ({
      queryKey: ['customers', 'one', id],
      queryFn: () => must(api.GET('/api/customers/{id}', { params: { path: { id } } })),
      enabled,
      staleTime: 5 * 60_000,
    })),
  });
  return new Map(distinct.map((id, index) => [id, results[index]?.data?.name]));
}
