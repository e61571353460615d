import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../api/client.ts';
import { must, type Me } from '@hostctl/api-client';
import { ListState, Pager, ProblemAlert } from '../components/feedback.tsx';
import { PageHeading } from '../components/page.tsx';
import { dateTime } from '../format.ts';
import { usagePath } from '../routes.ts';
import { Link } from '../router.tsx';
import { allows } from '../permissions.ts';

const PER_PAGE = 50;

/** Customers the caller can see (a scoped user sees only their own); managers may add one. */
export function CustomersScreen({ me }: { me: Me }) {
  const queries = useQueryClient();
  const [page, setPage] = useState(1);
  const [name, setName] = useState('');
  const list = useQuery({
    queryKey: ['customers', page],
    queryFn: () => must(api.GET('/api/customers', { params: { query: { page, per_page: PER_PAGE } } })),
    placeholderData: keepPreviousData,
  });
  const create = useMutation({
    mutationFn: () => must(api.POST('/api/customers', { body: { name: name.trim() } })),
    onSuccess: () => setName(''),
    onSettled: () => queries.invalidateQueries({ queryKey: ['customers'] }),
  });
  const rows = list.data?.data ?? [];
  return (
    <>
      <PageHeading title="Customers" />
      {allows(me, 'customers:manage') && me.customer_id === null ? (
        <form
          className="form-row"
          onSubmit={(event) => {
            event.preventDefault();
            create.mutate();
          }}
        >
          <label>
            Customer name
            <input required maxLength={100} value={name} onChange={(e) => setName(e.target.value)} />
          </label>
          <button type="submit" className="primary" disabled={create.isPending}>
            Add customer
          </button>
        </form>
      ) : null}
      <ProblemAlert error={create.error} />
      <ListState noun="customers" isPending={list.isPending} error={list.error} isEmpty={rows.length === 0}>
        <div className="table-scroll">
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">ID</th>
                <th scope="col">Created</th>
                <th scope="col">
                  <span className="visually-hidden">Usage</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((customer) => (
                <tr key={customer.id}>
                  <td>
                    <Link to={`/services?customer_id=${encodeURIComponent(customer.id)}`}>
                      {customer.name}
                    </Link>
                  </td>
                  <td>
                    <code>{customer.id}</code>
                  </td>
                  <td>{dateTime(customer.created_at)}</td>
                  <td>
                    <Link to={usagePath(customer.id)} aria-label={`Usage and quotas of ${customer.name}`}>
                      Usage
                    </Link>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </ListState>
      <Pager
        label="Customer pages"
        page={page}
        perPage={PER_PAGE}
        total={list.data?.total}
        onPage={setPage}
      />
    </>
  );
}
