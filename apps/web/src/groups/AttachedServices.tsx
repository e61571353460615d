import { useMutation } from '@tanstack/react-query';
import { must } from '@hostctl/api-client';
import { api } from '../api/client.ts';
import { ListState, ProblemAlert } from '../components/feedback.tsx';
import { servicePath } from '../routes.ts';
import { Link } from '../router.tsx';
import { useGroupServices } from './group-api.ts';

/**
 * The live services a group is attached to. A change reaches them at their next deployment; one
 * button redeploys them all (each an ordinary deployment, POST …/redeploy).
 */
export function AttachedServices({ groupId, canRedeploy }: { groupId: string; canRedeploy: boolean }) {
  const services = useGroupServices(groupId);
  const redeploy = useMutation({
    mutationFn: () =>
      must(api.POST('/api/variable-groups/{id}/redeploy', { params: { path: { id: groupId } } })),
  });
  const rows = services.data?.data ?? [];
  const names = new Map(rows.map((service) => [service.id, service.name]));
  return (
    <section className="card" aria-labelledby="attached-heading">
      <h2 id="attached-heading">Attached services</h2>
      <ListState
        noun="attached services"
        isPending={services.isPending}
        error={services.error}
        isEmpty={rows.length === 0}
        empty="No service uses this group. Attach it in a service's settings."
      >
        <ul className="plain">
          {rows.map((service) => (
            <li key={service.id} className="row">
              <Link to={servicePath(service.id, 'settings')}>{service.name}</Link>
            </li>
          ))}
        </ul>
        {canRedeploy ? (
          <div className="form-row">
            <button type="button" disabled={redeploy.isPending} onClick={() => redeploy.mutate()}>
              Redeploy attached services
            </button>
          </div>
        ) : null}
      </ListState>
      <ProblemAlert error={redeploy.error} />
      {redeploy.data ? (
        <div className="notice" role="status">
          <p>
            {redeploy.data.data.length} deployment{redeploy.data.data.length === 1 ? '' : 's'} queued.
          </p>
          <ul className="plain">
            {redeploy.data.data.map((queued) => (
              <li key={queued.deploy_job_id}>
                <Link to={servicePath(queued.service_id, 'deployments')}>
                  Follow {names.get(queued.service_id) ?? queued.service_id}
                </Link>
              </li>
            ))}
          </ul>
        </div>
      ) : null}
    </section>
  );
}
