import { useQuery } from '@tanstack/react-query';
import { must } from '@hostctl/api-client';
import { api } from '../api/client.ts';

/**
 * The components of the current release (its compose services), from the newest succeeded
 * deployment's pinned images; undefined while that is read. Empty when not known: a form then takes
 * a name as typed and the API checks it against the release. Runs and the terminal both pick one.
 */
export function useComponents(serviceId: string): string[] | undefined {
  const deployments = useQuery({
    queryKey: ['jobs', serviceId, 'components'],
    queryFn: () =>
      must(
        api.GET('/api/services/{id}/deployments', {
          params: { path: { id: serviceId }, query: { page: 1, per_page: 20 } },
        }),
      ),
  });
  if (deployments.isPending) return undefined;
  const current = deployments.data?.data.find((deployment) => deployment.status === 'succeeded');
  return Object.keys(current?.image_digests ?? {}).sort();
}
