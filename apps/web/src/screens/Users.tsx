import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../api/client.ts';
import { must, type User } from '@hostctl/api-client';
import { ListState, Pager, ProblemAlert } from '../components/feedback.tsx';
import { PageHeading } from '../components/page.tsx';
import { useCustomerNames } from '../customer-names.ts';
import { dateTime } from '../format.ts';

const PER_PAGE = 50;
const ROLES: User['role'][] = ['viewer', 'operator', 'admin'];

/** Users (admins only): provision one before their first sign-in, change a role or customer. */
export function UsersScreen() {
  const queries = useQueryClient();
  const [page, setPage] = useState(1);
  const [draft, setDraft] = useState({
    email: '',
    name: '',
    role: 'viewer' as User['role'],
    customer_id: '',
  });
  const list = useQuery({
    queryKey: ['users', page],
    queryFn: () => must(api.GET('/api/users', { params: { query: { page, per_page: PER_PAGE } } })),
    placeholderData: keepPreviousData,
  });
  const create = useMutation({
    mutationFn: () =>
      must(
        api.POST('/api/users', {
          body: { ...draft, customer_id: draft.customer_id.trim() || null },
        }),
      ),
    onSuccess: () => setDraft({ email: '', name: '', role: 'viewer', customer_id: '' }),
    onSettled: () => queries.invalidateQueries({ queryKey: ['users'] }),
  });
  const changeRole = useMutation({
    mutationFn: (change: { id: string; role: User['role'] }) =>
      must(
        api.PATCH('/api/users/{id}', { params: { path: { id: change.id } }, body: { role: change.role } }),
      ),
    onSettled: () => queries.invalidateQueries({ queryKey: ['users'] }),
  });
  const rows = list.data?.data ?? [];
  const customerNames = useCustomerNames(
    rows.flatMap((user) => (user.customer_id ? [user.customer_id] : [])),
    true,
  );
  return (
    <>
      <PageHeading title="Users" />
      <section className="card" aria-labelledby="new-user-heading">
        <h2 id="new-user-heading">Add a user</h2>
        <form
          className="form-row"
          onSubmit={(event) => {
            event.preventDefault();
            create.mutate();
          }}
        >
          <label>
            Email
            <input
              required
              type="email"
              value={draft.email}
              onChange={(e) => setDraft({ ...draft, email: e.target.value })}
            />
          </label>
          <label>
            Full name
            <input
              required
              value={draft.name}
              onChange={(e) => setDraft({ ...draft, name: e.target.value })}
            />
          </label>
          <label>
            Role
            <select
              value={draft.role}
              onChange={(e) => setDraft({ ...draft, role: e.target.value as User['role'] })}
            >
              {ROLES.map((role) => (
                <option key={role}>{role}</option>
              ))}
            </select>
          </label>
          <label>
            Customer ID (empty: all customers)
            <input
              value={draft.customer_id}
              onChange={(e) => setDraft({ ...draft, customer_id: e.target.value })}
            />
          </label>
          <button type="submit" className="primary" disabled={create.isPending}>
            Add user
          </button>
        </form>
        <ProblemAlert error={create.error} />
      </section>
      <section aria-labelledby="users-heading">
        <h2 id="users-heading">All users</h2>
        <ProblemAlert error={changeRole.error} />
        <ListState noun="users" isPending={list.isPending} error={list.error} isEmpty={rows.length === 0}>
          <div className="table-scroll">
            <table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Email</th>
                  <th scope="col">Role</th>
                  <th scope="col">Customer</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((user) => (
                  <tr key={user.id}>
                    <td>{user.name}</td>
                    <td>{user.email}</td>
                    <td>
                      <select
                        aria-label={`Role of ${user.email}`}
                        value={user.role}
                        disabled={changeRole.isPending}
                        onChange={(e) =>
                          changeRole.mutate({ id: user.id, role: e.target.value as User['role'] })
                        }
                      >
                        {ROLES.map((role) => (
                          <option key={role}>{role}</option>
                        ))}
                      </select>
                    </td>
                    <td title={user.customer_id ?? undefined}>
                      {user.customer_id ? (customerNames.get(user.customer_id) ?? user.customer_id) : 'all'}
                    </td>
                    <td>{dateTime(user.created_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </ListState>
      </section>
      <Pager label="User pages" page={page} perPage={PER_PAGE} total={list.data?.total} onPage={setPage} />
    </>
  );
}
