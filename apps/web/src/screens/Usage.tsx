import { useQuery } from '@tanstack/react-query';
import { api } from '../api/client.ts';
import { must } from '@hostctl/api-client';
import { ListState, ProblemAlert } from '../components/feedback.tsx';
import { PageHeading } from '../components/page.tsx';
import { dateTime } from '../format.ts';

/** What the quotas count, as a person reads it (docs/quotas.md). */
const QUOTA_LABELS: Record<string, string> = {
  services: 'Services',
  containers: 'Containers',
  memory_mb: 'Memory limits (MiB)',
  cpus: 'CPU limits (CPUs)',
  deploys_per_hour: 'Deploys in the last hour',
  notification_subscriptions: 'Notification subscriptions',
};

type Quota = Awaited<ReturnType<typeof fetchQuota>>;
const fetchQuota = (id: string) => must(api.GET('/api/customers/{id}/quota', { params: { path: { id } } }));

/** Each quota with its effective limit (null: unlimited) and the customer's usage of it. */
function quotaRows(quota: Quota | undefined) {
  if (!quota) return [];
  return (Object.keys(quota.limits) as (keyof Quota['limits'])[]).map((name) => ({
    name,
    limit: quota.limits[name],
    used: quota.usage[name],
  }));
}

const HOUR = 3600;
const hours = (seconds: number) => (seconds / HOUR).toLocaleString(undefined, { maximumFractionDigits: 1 });

/**
 * A customer's quotas (usage against each limit) and this month's metered usage per service
 * (docs/quotas.md, docs/metering.md), with the month as a CSV export.
 */
export function UsageScreen({ customerId }: { customerId: string }) {
  const customer = useQuery({
    queryKey: ['customers', customerId],
    queryFn: () => must(api.GET('/api/customers/{id}', { params: { path: { id: customerId } } })),
  });
  const quota = useQuery({
    queryKey: ['customers', customerId, 'quota'],
    queryFn: () => fetchQuota(customerId),
  });
  const monthStart = new Date(
    Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), 1),
  ).toISOString();
  const usage = useQuery({
    queryKey: ['customers', customerId, 'usage', monthStart],
    queryFn: () =>
      must(
        api.GET('/api/customers/{id}/usage', {
          params: {
            path: { id: customerId },
            query: { from: monthStart, granularity: 'month', per_page: 100 },
          },
        }),
      ),
  });
  const report = usage.data && typeof usage.data === 'object' ? usage.data : undefined;
  const csvUrl = `/api/customers/${encodeURIComponent(customerId)}/usage?${new URLSearchParams({
    from: monthStart,
    granularity: 'day',
    format: 'csv',
  }).toString()}`;

  return (
    <>
      <PageHeading title={customer.data ? `Usage of ${customer.data.name}` : 'Usage'} />
      <ProblemAlert error={customer.error} />
      <section aria-labelledby="quota-heading" className="card">
        <h2 id="quota-heading">Quotas{quota.data ? ` (plan ${quota.data.plan})` : ''}</h2>
        <ListState noun="quotas" isPending={quota.isPending} error={quota.error} isEmpty={false}>
          <ul className="plain quota-list">
            {quotaRows(quota.data).map(({ name, limit, used }) => {
              const label = QUOTA_LABELS[name] ?? name;
              return (
                <li key={name} className="quota-row">
                  <span id={`quota-${name}`}>{label}</span>
                  {limit === null ? (
                    <span>
                      {used.toLocaleString()} <span className="muted">(unlimited)</span>
                    </span>
                  ) : (
                    <>
                      <meter
                        aria-labelledby={`quota-${name}`}
                        min={0}
                        max={Math.max(limit, 1)}
                        value={Math.min(used, Math.max(limit, 1))}
                        high={limit * 0.8}
                        optimum={0}
                      />
                      <span>
                        {used.toLocaleString()} of {limit.toLocaleString()}
                      </span>
                    </>
                  )}
                </li>
              );
            })}
          </ul>
        </ListState>
      </section>
      <section aria-labelledby="month-heading" className="card">
        <h2 id="month-heading">This month</h2>
        <p className="muted">
          Closed hours only: final through {dateTime(report?.closed_through)}.{' '}
          <a href={csvUrl} download>
            Download by day (CSV)
          </a>
        </p>
        <ListState
          noun="usage"
          isPending={usage.isPending}
          error={usage.error}
          isEmpty={(report?.data.length ?? 0) === 0}
          empty="No usage recorded this month yet."
        >
          <div className="table-scroll">
            <table>
              <caption className="visually-hidden">Usage per service this month</caption>
              <thead>
                <tr>
                  <th scope="col">Service</th>
                  <th scope="col">Container hours</th>
                  <th scope="col">Memory GiB-hours</th>
                  <th scope="col">CPU hours</th>
                  <th scope="col">Deploys</th>
                </tr>
              </thead>
              <tbody>
                {report?.data.map((row) => (
                  <tr key={row.service_id}>
                    <th scope="row">{row.service_name ?? row.service_id}</th>
                    <td>{hours(row.container_seconds)}</td>
                    <td>{hours(row.memory_mb_seconds / 1024)}</td>
                    <td>{hours(row.cpu_seconds)}</td>
                    <td>{row.deploys}</td>
                  </tr>
                ))}
              </tbody>
              {report ? (
                <tfoot>
                  <tr>
                    <th scope="row">Total</th>
                    <td>{hours(report.totals.container_seconds)}</td>
                    <td>{hours(report.totals.memory_mb_seconds / 1024)}</td>
                    <td>{hours(report.totals.cpu_seconds)}</td>
                    <td>{report.totals.deploys}</td>
                  </tr>
                </tfoot>
              ) : null}
            </table>
          </div>
        </ListState>
      </section>
    </>
  );
}
