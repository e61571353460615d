import { keepPreviousData, useQuery, type QueryClient } from '@tanstack/react-query';
import { must, type BackupSchedule } from '@hostctl/api-client';
import { api } from '../api/client.ts';
import { isActive } from './backup-format.ts';

// The Backups tab's reads (docs/backups.md). Every key starts with ['backups', serviceId], so one
// invalidation after a change refreshes the list and the schedule.

export const BACKUPS_PER_PAGE = 20;
const backupsKey = (serviceId: string) => ['backups', serviceId] as const;

export function refreshBackups(queries: QueryClient, serviceId: string): Promise<void> {
  return queries.invalidateQueries({ queryKey: backupsKey(serviceId) });
}

/**
 * A page of the service's backups, newest first: read every 2 s while a backup, a check or a
 * restore of one of them is still going (the row says how it ended), every 15 s otherwise.
 */
export function useBackups(serviceId: string, page: number) {
  return useQuery({
    queryKey: [...backupsKey(serviceId), 'list', page],
    queryFn: () =>
      must(
        api.GET('/api/services/{id}/backups', {
          params: { path: { id: serviceId }, query: { page, per_page: BACKUPS_PER_PAGE } },
        }),
      ),
    placeholderData: keepPreviousData,
    refetchInterval: (query) => (query.state.data?.data.some(isActive) ? 2_000 : 15_000),
  });
}

/** The schedule as the API answered a change (or null once removed): shown at once, with the notice. */
export function showBackupSchedule(
  queries: QueryClient,
  serviceId: string,
  schedule: BackupSchedule | null,
): void {
  queries.setQueryData([...backupsKey(serviceId), 'schedule'], schedule);
}

/** The service's backup schedule; null when it has none (the API's 404 for that case). */
export function useBackupSchedule(serviceId: string) {
  return useQuery({
    queryKey: [...backupsKey(serviceId), 'schedule'],
    queryFn: async (): Promise<BackupSchedule | null> => {
      const call = api.GET('/api/services/{id}/backup-schedule', { params: { path: { id: serviceId } } });
      const { response } = await call;
      if (response.status === 404) {
        // The service itself gone is a 404 too: the service screen says so; here, no schedule.
        return null;
      }
      return must(call);
    },
    refetchInterval: 30_000,
  });
}
