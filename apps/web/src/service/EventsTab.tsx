import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../api/client.ts';
import { must } from '@hostctl/api-client';
import { ListState, Pager, StatusBadge } from '../components/feedback.tsx';
import { dateTime, timeAgo } from '../format.ts';

const PER_PAGE = 50;

/** The service's events, newest first. */
export function EventsTab({ serviceId }: { serviceId: string }) {
  const [page, setPage] = useState(1);
  const events = useQuery({
    queryKey: ['events', serviceId, page],
    queryFn: () =>
      must(
        api.GET('/api/services/{id}/events', {
          params: { path: { id: serviceId }, query: { page, per_page: PER_PAGE } },
        }),
      ),
    placeholderData: keepPreviousData,
    refetchInterval: 10_000,
  });
  const rows = events.data?.data ?? [];
  return (
    <section aria-label="Events">
      <ListState noun="events" isPending={events.isPending} error={events.error} isEmpty={rows.length === 0}>
        <ol className="plain timeline">
          {rows.map((event, index) => (
            <li key={`${event.timestamp}-${index}`} className="row">
              <time dateTime={event.timestamp} title={dateTime(event.timestamp)} className="muted">
                {timeAgo(event.timestamp)}
              </time>
              <strong>{event.type}</strong>
              <StatusBadge status={event.status} />
              <span>{event.message}</span>
            </li>
          ))}
        </ol>
      </ListState>
      <Pager label="Event pages" page={page} perPage={PER_PAGE} total={events.data?.total} onPage={setPage} />
    </section>
  );
}
