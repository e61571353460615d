import { useQueries, useQuery } from '@tanstack/react-query';
import { api } from '../api/client.ts';
import { must, type ServiceSummary } from '@hostctl/api-client';
import { ListState, StatusBadge } from '../components/feedback.tsx';
import { PageHeading } from '../components/page.tsx';
import { timeAgo } from '../format.ts';
import { servicePath } from '../routes.ts';
import { Link } from '../router.tsx';
import { SERVICE_STATUSES } from '../services-query.ts';

const REFRESH_MS = 10_000;

/** What is up or down at a glance: counts by status, what is failing, what is deploying, what changed. */
export function OverviewScreen() {
  const counts = useQueries({
    queries: SERVICE_STATUSES.map((status) => ({
      queryKey: ['services', 'count', status],
      queryFn: () => must(api.GET('/api/services', { params: { query: { status, per_page: 1 } } })),
      refetchInterval: REFRESH_MS,
    })),
  });
  const failing = useServices('failed', 'updated_at');
  const deploying = useServices('deploying', 'updated_at');
  const latest = useServices(null, 'updated_at');

  return (
    <>
      <PageHeading title="Overview" />
      <section aria-labelledby="counts-heading">
        <h2 id="counts-heading">Services by status</h2>
        <ul className="counts">
          {SERVICE_STATUSES.map((status, index) => {
            const count = counts[index];
            return (
              <li key={status} aria-busy={count?.isPending}>
                <Link to={`/services?status=${status}`}>
                  <span className="count">{count?.data?.total ?? '…'}</span>
                  <StatusBadge status={status} />
                </Link>
              </li>
            );
          })}
        </ul>
      </section>
      <div className="columns">
        <ServiceSection title="Failing" query={failing} empty="Nothing is failing." />
        <ServiceSection title="Deploying now" query={deploying} empty="No deployment in progress." />
      </div>
      <ServiceSection title="Recently changed" query={latest} empty="No services yet." />
    </>
  );
}

function useServices(status: (typeof SERVICE_STATUSES)[number] | null, sort: 'updated_at') {
  return useQuery({
    queryKey: ['services', 'overview', status, sort],
    queryFn: () =>
      must(
        api.GET('/api/services', {
          params: { query: { sort, order: 'desc', per_page: 8, ...(status ? { status } : {}) } },
        }),
      ),
    refetchInterval: REFRESH_MS,
  });
}

interface SectionProps {
  title: string;
  empty: string;
  query: ReturnType<typeof useServices>;
}

function ServiceSection({ title, empty, query }: SectionProps) {
  const id = `section-${title.toLowerCase().replace(/\W+/g, '-')}`;
  const rows: ServiceSummary[] = query.data?.data ?? [];
  return (
    <section aria-labelledby={id} className="card">
      <h2 id={id}>
        {title}
        {query.data && query.data.total > rows.length ? (
          <span className="muted"> ({query.data.total})</span>
        ) : null}
      </h2>
      <ListState
        noun="services"
        isPending={query.isPending}
        error={query.error}
        isEmpty={rows.length === 0}
        empty={empty}
      >
        <ul className="plain">
          {rows.map((service) => (
            <li key={service.id} className="row">
              <Link to={servicePath(service.id)}>{service.name}</Link>
              <StatusBadge status={service.status} />
              <span className="muted">{timeAgo(service.updated_at)}</span>
            </li>
          ))}
        </ul>
      </ListState>
    </section>
  );
}
