import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { must, type Me } from '@hostctl/api-client';
import { api } from '../api/client.ts';
import { ListState, Pager, ProblemAlert } from '../components/feedback.tsx';
import { PageHeading } from '../components/page.tsx';
import { useCustomerNames } from '../customer-names.ts';
import { timeAgo } from '../format.ts';
import { allows } from '../permissions.ts';
import { variableGroupPath } from '../routes.ts';
import { Link, navigate } from '../router.tsx';
import { GROUP_NAME_PATTERN, GROUPS_KEY, refreshGroupLists, type GroupListItem } from './group-api.ts';

const PER_PAGE = 20;

/**
 * A customer's shared variable groups (docs/secrets.md#variable-groups): the list, with each
 * group's variable names and how many services use it, and a new group for those who may create.
 */
export function VariableGroupsScreen({ me }: { me: Me }) {
  const [page, setPage] = useState(1);
  const list = useQuery({
    queryKey: [GROUPS_KEY, 'list', page],
    queryFn: () => must(api.GET('/api/variable-groups', { params: { query: { page, per_page: PER_PAGE } } })),
    placeholderData: keepPreviousData,
  });
  const rows = list.data?.data ?? [];
  // A customer's own users only ever see their customer: the column would repeat it.
  const showsCustomer = me.customer_id === null;
  const customerNames = useCustomerNames(
    rows.map((group) => group.customer_id),
    showsCustomer,
  );
  return (
    <>
      <PageHeading title="Variable groups" />
      <p className="muted">
        Variables shared by a customer&apos;s services. A service&apos;s own value wins over a group&apos;s;
        among a service&apos;s groups, the later one wins.
      </p>
      {allows(me, 'services:create') ? <NewGroup me={me} /> : null}
      <section aria-labelledby="groups-heading">
        <h2 id="groups-heading">Groups</h2>
        <ListState
          noun="variable groups"
          isPending={list.isPending}
          error={list.error}
          isEmpty={rows.length === 0}
        >
          <div className="table-scroll" aria-busy={list.isFetching}>
            <table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  {showsCustomer ? <th scope="col">Customer</th> : null}
                  <th scope="col">Variables</th>
                  <th scope="col">Services</th>
                  <th scope="col">Last change</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((group) => (
                  <GroupRow
                    key={group.id}
                    group={group}
                    customer={
                      showsCustomer ? (customerNames.get(group.customer_id) ?? group.customer_id) : null
                    }
                  />
                ))}
              </tbody>
            </table>
          </div>
        </ListState>
        <Pager
          label="Variable group pages"
          page={page}
          perPage={PER_PAGE}
          total={list.data?.total}
          onPage={setPage}
        />
      </section>
    </>
  );
}

/** One row, from the list's own answer: names (never values) and the count of services using it. */
function GroupRow({ group, customer }: { group: GroupListItem; customer: string | null }) {
  const secret = new Set(group.secret_variable_names);
  const names = group.variable_names.map((name) => (secret.has(name) ? `${name} (secret)` : name));
  return (
    <tr>
      <th scope="row">
        <Link to={variableGroupPath(group.id)}>{group.name}</Link>
      </th>
      {customer !== null ? <td>{customer}</td> : null}
      <td>{names.length === 0 ? 'none' : names.join(', ')}</td>
      <td>{group.service_count}</td>
      <td title={group.updated_at}>{timeAgo(group.updated_at)}</td>
    </tr>
  );
}

/** A new, empty group; its variables are added on its page. */
function NewGroup({ me }: { me: Me }) {
  const queries = useQueryClient();
  const [name, setName] = useState('');
  const [customer, setCustomer] = useState(me.customer_id ?? '');
  const customers = useQuery({
    queryKey: ['customers', 'all'],
    queryFn: () => must(api.GET('/api/customers', { params: { query: { per_page: 100 } } })),
    enabled: me.customer_id === null,
  });
  const create = useMutation({
    mutationFn: () =>
      must(
        api.POST('/api/variable-groups', {
          body: { name: name.trim(), ...(customer ? { customer_id: customer } : {}) },
        }),
      ),
    onSuccess: async (created) => {
      await refreshGroupLists(queries);
      navigate(variableGroupPath(created.id));
    },
  });
  return (
    <section className="card" aria-labelledby="new-group-heading">
      <h2 id="new-group-heading">New group</h2>
      <form
        className="form-row"
        onSubmit={(event) => {
          event.preventDefault();
          create.mutate();
        }}
      >
        <label>
          Group name
          <input
            required
            minLength={3}
            maxLength={63}
            pattern={GROUP_NAME_PATTERN}
            value={name}
            aria-describedby="group-name-hint"
            onChange={(e) => setName(e.target.value)}
          />
        </label>
        {me.customer_id === null ? (
          <label>
            Customer
            <select required value={customer} onChange={(e) => setCustomer(e.target.value)}>
              <option value="">Choose a customer</option>
              {(customers.data?.data ?? []).map((c) => (
                <option key={c.id} value={c.id}>
                  {c.name}
                </option>
              ))}
            </select>
          </label>
        ) : null}
        <button type="submit" className="primary" disabled={create.isPending}>
          Create group
        </button>
      </form>
      <p id="group-name-hint" className="hint">
        Lowercase letters, digits and dashes, 3 to 63 characters.
      </p>
      <ProblemAlert error={customers.error} />
      <ProblemAlert error={create.error} />
    </section>
  );
}
