import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { api } from '../api/client.ts';
import { must, type Me } from '@hostctl/api-client';
import { ListState, Pager, StatusBadge } from '../components/feedback.tsx';
import { PageHeading } from '../components/page.tsx';
import { timeAgo } from '../format.ts';
import { servicePath } from '../routes.ts';
import { Link, navigate, useLocation } from '../router.tsx';
import {
  PAGE_SIZES,
  parseServicesQuery,
  SERVICE_STATUSES,
  servicesSearch,
  SORT_FIELDS,
  toApiQuery,
  withChange,
  type ServicesQuery,
} from '../services-query.ts';
import { allows } from '../permissions.ts';
import { useCustomerNames } from '../customer-names.ts';

const SORT_LABELS: Record<ServicesQuery['sort'], string> = {
  name: 'Name',
  status: 'Status',
  created_at: 'Created',
  updated_at: 'Last change',
};

/** The services list: server-side paging, filters, sort and search, all in the URL. */
export function ServicesScreen({ me }: { me: Me }) {
  const location = useLocation();
  const query = parseServicesQuery(location.search);
  const update = (change: Partial<ServicesQuery>, replace = false) =>
    navigate(`/services${servicesSearch(withChange(query, change))}`, { replace });
  const list = useQuery({
    queryKey: ['services', 'list', toApiQuery(query)],
    queryFn: () => must(api.GET('/api/services', { params: { query: toApiQuery(query) } })),
    placeholderData: keepPreviousData,
    refetchInterval: 15_000,
  });
  const rows = list.data?.data ?? [];
  // A customer-scoped user only ever sees their own customer: the column would repeat it.
  const showsCustomer = me.customer_id === null;
  const customerNames = useCustomerNames(
    rows.map((service) => service.customer_id),
    showsCustomer,
  );

  return (
    <>
      <PageHeading title="Services">
        {allows(me, 'services:create') ? (
          <Link className="button primary" to="/services/new">
            Create service
          </Link>
        ) : null}
      </PageHeading>
      <form
        className="filters"
        role="search"
        aria-label="Filter services"
        onSubmit={(e) => e.preventDefault()}
      >
        <SearchField value={query.search} onSearch={(search) => update({ search }, true)} />
        <label>
          Status
          <select
            value={query.status ?? ''}
            onChange={(e) => update({ status: (e.target.value || null) as ServicesQuery['status'] })}
          >
            <option value="">All</option>
            {SERVICE_STATUSES.map((status) => (
              <option key={status}>{status}</option>
            ))}
          </select>
        </label>
        <label>
          Sort by
          <select
            value={query.sort}
            onChange={(e) => update({ sort: e.target.value as ServicesQuery['sort'] })}
          >
            {SORT_FIELDS.map((field) => (
              <option key={field} value={field}>
                {SORT_LABELS[field]}
              </option>
            ))}
          </select>
        </label>
        <label>
          Order
          <select value={query.order} onChange={(e) => update({ order: e.target.value as 'asc' | 'desc' })}>
            <option value="asc">Ascending</option>
            <option value="desc">Descending</option>
          </select>
        </label>
        <label>
          Per page
          <select value={query.per_page} onChange={(e) => update({ per_page: Number(e.target.value) })}>
            {PAGE_SIZES.map((size) => (
              <option key={size}>{size}</option>
            ))}
          </select>
        </label>
      </form>
      <p className="muted" aria-live="polite">
        {list.data ? `${list.data.total} service${list.data.total === 1 ? '' : 's'}` : ''}
      </p>
      <ListState
        noun="services"
        isPending={list.isPending}
        error={list.error}
        isEmpty={rows.length === 0}
        empty={query.search || query.status ? 'No services match these filters.' : 'No services yet.'}
      >
        <div className="table-scroll" aria-busy={list.isFetching}>
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Status</th>
                <th scope="col">Method</th>
                {showsCustomer ? <th scope="col">Customer</th> : null}
                <th scope="col">Last change</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((service) => (
                <tr key={service.id}>
                  <td>
                    <Link to={servicePath(service.id)}>{service.name}</Link>
                  </td>
                  <td>
                    <StatusBadge status={service.status} />
                  </td>
                  <td>{service.template ? `template: ${service.template}` : service.deploy_method}</td>
                  {showsCustomer ? (
                    <td title={service.customer_id}>
                      {customerNames.get(service.customer_id) ?? service.customer_id}
                    </td>
                  ) : null}
                  <td title={service.updated_at}>{timeAgo(service.updated_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </ListState>
      <Pager
        label="Services pages"
        page={query.page}
        perPage={query.per_page}
        total={list.data?.total}
        onPage={(page) => update({ page })}
      />
    </>
  );
}

/** Search as you type, written to the URL a moment after the last keystroke. */
function SearchField({ value, onSearch }: { value: string; onSearch: (search: string) => void }) {
  const [text, setText] = useState(value);
  useEffect(() => setText(value), [value]);
  useEffect(() => {
    if (text === value) return;
    const timer = setTimeout(() => onSearch(text.trim()), 250);
    return () => clearTimeout(timer);
  }, [text, value, onSearch]);
  return (
    <label>
      Search
      <input type="search" value={text} maxLength={100} onChange={(e) => setText(e.target.value)} />
    </label>
  );
}
