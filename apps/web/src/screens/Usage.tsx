import { useQuery } from '@tanstack/react-query';
import { api } from '../api/client.ts';
import { must, type Me } from '@hostctl/api-client';
import { BackupTargetSection } from '../backups/BackupTargetSection.tsx';
import { ListState, ProblemAlert } from '../components/feedback.tsx';
import { PageHeading } from '../components/page.tsx';
import { QuotaBars } from '../components/QuotaBars.tsx';
import { dateTime } from '../format.ts';
import { allows } from '../permissions.ts';

const fetchQuota = (id: string) => must(api.GET('/api/customers/{id}/quota', { params: { path: { id } } }));

const HOUR = 3600;
const hours = (seconds: number) => (seconds / HOUR).toLocaleString(undefined, { maximumFractionDigits: 1 });

/**
 * A customer's quotas (usage against each limit) and this month's metered usage per service
 * (docs/quotas.md, docs/metering.md), with the month as a CSV export; for those who may manage
 * the customer, its own backup target (docs/backups.md#a-customers-own-target).
 */
export function UsageScreen({ customerId, me }: { customerId: string; me: Me }) {
  const manages =
    allows(me, 'customers:manage') && (me.customer_id === null || me.customer_id === customerId);
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
          {quota.data ? <QuotaBars quota={quota.data} /> : null}
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
      {manages ? <BackupTargetSection customerId={customerId} /> : null}
    </>
  );
}
