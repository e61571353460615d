import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { api } from '../api/client.ts';
import { must, type Deployment, type Service } from '@hostctl/api-client';
import { ListState, Pager, ProblemAlert, StatusBadge } from '../components/feedback.tsx';
import { dateTime, timeAgo } from '../format.ts';
import { invalidateService } from './actions.ts';
import { DeploymentProgress } from './DeploymentProgress.tsx';

const PER_PAGE = 20;
const ACTIVE = new Set<Deployment['status']>(['queued', 'running']);

/** History of deployments; the one in progress (or the one picked) is followed live with its log. */
export function DeploymentsTab({ service, canOperate }: { service: Service; canOperate: boolean }) {
  const queries = useQueryClient();
  const [page, setPage] = useState(1);
  const [picked, setPicked] = useState<string | null>(null);
  const list = useQuery({
    queryKey: ['deployments', service.id, page],
    queryFn: () =>
      must(
        api.GET('/api/services/{id}/deployments', {
          params: { path: { id: service.id }, query: { page, per_page: PER_PAGE } },
        }),
      ),
    placeholderData: keepPreviousData,
    refetchInterval: 5_000,
  });
  const cancel = useMutation({
    mutationFn: (id: string) => must(api.POST('/api/deployments/{id}/cancel', { params: { path: { id } } })),
    onSettled: () => invalidateService(queries, service.id),
  });
  const rows = list.data?.data ?? [];
  const active = rows.find((deployment) => ACTIVE.has(deployment.status));
  const shown = picked ?? active?.id ?? rows[0]?.id ?? null;

  // A new deployment (redeploy, rollback) takes the live panel over from a finished one picked earlier.
  useEffect(() => {
    if (active) setPicked(null);
  }, [active]);

  return (
    <section aria-label="Deployments">
      <ProblemAlert error={cancel.error} />
      {shown ? (
        <DeploymentProgress
          key={shown}
          deploymentId={shown}
          onEnd={() => void invalidateService(queries, service.id)}
          cancel={
            canOperate && rows.some((row) => row.id === shown && ACTIVE.has(row.status)) ? (
              <button
                type="button"
                className="danger"
                disabled={cancel.isPending}
                onClick={() => cancel.mutate(shown)}
              >
                Cancel deployment
              </button>
            ) : null
          }
        />
      ) : null}
      <h2>History</h2>
      <ListState noun="deployments" isPending={list.isPending} error={list.error} isEmpty={rows.length === 0}>
        <div className="table-scroll">
          <table>
            <thead>
              <tr>
                <th scope="col">Started</th>
                <th scope="col">Trigger</th>
                <th scope="col">Status</th>
                <th scope="col">Step</th>
                <th scope="col">Finished</th>
                <th scope="col">Error and warnings</th>
                <th scope="col">
                  <span className="visually-hidden">Log</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((deployment) => (
                <tr key={deployment.id} aria-current={deployment.id === shown ? 'true' : undefined}>
                  <td title={dateTime(deployment.created_at)}>{timeAgo(deployment.created_at)}</td>
                  <td>{deployment.trigger}</td>
                  <td>
                    <StatusBadge status={deployment.status} />
                  </td>
                  <td>{deployment.step ?? '—'}</td>
                  <td>{dateTime(deployment.finished_at)}</td>
                  <td>
                    {deployment.error ?? ''}
                    {deployment.warnings.length > 0 ? (
                      <ul className="deployment-warnings">
                        {deployment.warnings.map((warning) => (
                          <li key={warning}>Warning: {warning}</li>
                        ))}
                      </ul>
                    ) : null}
                  </td>
                  <td>
                    <button type="button" className="ghost" onClick={() => setPicked(deployment.id)}>
                      Show log
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </ListState>
      <Pager
        label="Deployment pages"
        page={page}
        perPage={PER_PAGE}
        total={list.data?.total}
        onPage={setPage}
      />
    </section>
  );
}
