import { useQuery } from '@tanstack/react-query';
import { api, must, type Me } from '../api/client.ts';
import { ProblemAlert, StatusBadge } from '../components/feedback.tsx';
import { PageHeading } from '../components/page.tsx';
import { SERVICE_TABS, servicePath, type ServiceTab } from '../routes.ts';
import { Link } from '../router.tsx';

const TAB_LABELS: Record<ServiceTab, string> = {
  overview: 'Overview',
  deployments: 'Deployments',
  logs: 'Logs',
  events: 'Events',
  settings: 'Settings',
};

export function serviceQueryKey(id: string) {
  return ['service', id] as const;
}

/** One service: its name as the heading, the tabs as links (each tab has its own address). */
export function ServiceScreen({ id, tab }: { id: string; tab: ServiceTab; me: Me }) {
  const service = useQuery({
    queryKey: serviceQueryKey(id),
    queryFn: () => must(api.GET('/api/services/{id}', { params: { path: { id } } })),
    refetchInterval: 10_000,
  });
  if (service.isPending) {
    return (
      <div aria-busy="true" className="muted state">
        Loading service…
      </div>
    );
  }
  if (service.error) {
    return (
      <>
        <PageHeading title="Service" />
        <ProblemAlert error={service.error} />
      </>
    );
  }
  const data = service.data;
  return (
    <>
      <PageHeading title={data.name}>
        <StatusBadge status={data.status} />
      </PageHeading>
      <nav aria-label="Service sections" className="tabs">
        <ul>
          {SERVICE_TABS.map((name) => (
            <li key={name}>
              <Link to={servicePath(id, name)} aria-current={name === tab ? 'page' : undefined}>
                {TAB_LABELS[name]}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
    </>
  );
}
