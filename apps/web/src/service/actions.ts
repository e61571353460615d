import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api } from '../api/client.ts';
import { must } from '@hostctl/api-client';

export type LifecycleAction = 'start' | 'stop' | 'restart' | 'redeploy' | 'rollback';

/** A lifecycle action on a service; the service, its deployments and the lists refresh afterwards. */
export function useServiceAction(id: string) {
  const queries = useQueryClient();
  return useMutation({
    mutationFn: async (action: LifecycleAction) => {
      const path = { params: { path: { id } } };
      switch (action) {
        case 'start':
          return must(api.POST('/api/services/{id}/start', path));
        case 'stop':
          return must(api.POST('/api/services/{id}/stop', path));
        case 'restart':
          return must(api.POST('/api/services/{id}/restart', path));
        case 'redeploy':
          return must(api.POST('/api/services/{id}/redeploy', path));
        case 'rollback':
          return must(api.POST('/api/services/{id}/rollback', { ...path, body: {} }));
      }
    },
    onSettled: () => invalidateService(queries, id),
  });
}

export function invalidateService(queries: ReturnType<typeof useQueryClient>, id: string): Promise<void> {
  return Promise.all([
    queries.invalidateQueries({ queryKey: ['service', id] }),
    queries.invalidateQueries({ queryKey: ['deployments', id] }),
    queries.invalidateQueries({ queryKey: ['services'] }),
  ]).then(() => undefined);
}
