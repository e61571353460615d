import { keepPreviousData, useQuery, type QueryClient } from '@tanstack/react-query';
import { must, type Schedule } from '@hostctl/api-client';
import { api } from '../api/client.ts';
import { isFinalRun } from './job-format.ts';

// The Jobs tab's reads (docs/jobs.md). Every key starts with ['jobs', serviceId], so one
// invalidation after a change refreshes the schedules (with their last runs) and the histories.

export const RUNS_PER_PAGE = 20;
/** The runs shown: the whole service's (one-off and scheduled), or one schedule's. */
export type RunsFilter = { kind: 'service' } | { kind: 'schedule'; schedule: Schedule };

const jobsKey = (serviceId: string) => ['jobs', serviceId] as const;

export function refreshJobs(queries: QueryClient, serviceId: string): Promise<void> {
  return queries.invalidateQueries({ queryKey: jobsKey(serviceId) });
}

/** The lists only (schedules, last runs, histories): after a run ended, its own read is current. */
export function refreshJobLists(queries: QueryClient, serviceId: string): Promise<void> {
  return queries.invalidateQueries({
    queryKey: jobsKey(serviceId),
    predicate: (query) => query.queryKey[2] !== 'run',
  });
}

/** One run's own read, when its end is known before its next poll. */
export function refreshRun(queries: QueryClient, serviceId: string, runId: string): Promise<void> {
  return queries.invalidateQueries({ queryKey: [...jobsKey(serviceId), 'run', runId] });
}

export function useSchedules(serviceId: string) {
  return useQuery({
    queryKey: [...jobsKey(serviceId), 'schedules'],
    queryFn: () => must(api.GET('/api/services/{id}/schedules', { params: { path: { id: serviceId } } })),
    refetchInterval: 15_000,
  });
}

export function useRuns(serviceId: string, filter: RunsFilter, page: number) {
  const query = { page, per_page: RUNS_PER_PAGE };
  return useQuery({
    queryKey: [...jobsKey(serviceId), 'runs', filter.kind === 'service' ? null : filter.schedule.id, page],
    queryFn: () =>
      filter.kind === 'service'
        ? must(api.GET('/api/services/{id}/runs', { params: { path: { id: serviceId }, query } }))
        : must(api.GET('/api/schedules/{id}/runs', { params: { path: { id: filter.schedule.id }, query } })),
    placeholderData: keepPreviousData,
    refetchInterval: 5_000,
  });
}

/**
 * One run with its output, read again every 2 s until it is final (for its status: while it runs,
 * the panel follows its output over the WebSocket, use-run-follow.ts).
 */
export function useRun(serviceId: string, runId: string) {
  return useQuery({
    queryKey: [...jobsKey(serviceId), 'run', runId],
    queryFn: () => must(api.GET('/api/runs/{id}', { params: { path: { id: runId } } })),
    refetchInterval: (query) => (query.state.data && isFinalRun(query.state.data.status) ? false : 2_000),
  });
}
