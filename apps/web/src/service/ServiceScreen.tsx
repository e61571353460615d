import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../api/client.ts';
import { must, type Me, type Service } from '@hostctl/api-client';
import { ConfirmQuestion } from '../components/ConfirmQuestion.tsx';
import { ProblemAlert, StatusBadge } from '../components/feedback.tsx';
import { PageHeading } from '../components/page.tsx';
import { SERVICE_TABS, servicePath, type ServiceTab } from '../routes.ts';
import { Link } from '../router.tsx';
import { allows } from '../permissions.ts';
import { useServiceAction, type LifecycleAction } from './actions.ts';
import { DeploymentsTab } from './DeploymentsTab.tsx';
import { EventsTab } from './EventsTab.tsx';
import { JobsTab } from '../jobs/JobsTab.tsx';
import { BackupsTab } from '../backups/BackupsTab.tsx';
import { TerminalTab } from '../terminal/TerminalTab.tsx';
import { LogsTab } from './LogsTab.tsx';
import { OverviewTab } from './OverviewTab.tsx';
import { SettingsTab } from './SettingsTab.tsx';

const TAB_LABELS: Record<ServiceTab, string> = {
  overview: 'Overview',
  deployments: 'Deployments',
  logs: 'Logs',
  jobs: 'Jobs',
  terminal: 'Terminal',
  backups: 'Backups',
  events: 'Events',
  settings: 'Settings',
};

/** One service: its name as the heading, lifecycle actions, and the tabs (each with its own address). */
export function ServiceScreen({ id, tab, me }: { id: string; tab: ServiceTab; me: Me }) {
  const service = useQuery({
    queryKey: ['service', id],
    queryFn: () => must(api.GET('/api/services/{id}', { params: { path: { id } } })),
    // Faster while something is moving, so a deployment's end shows without a reload.
    refetchInterval: (query) => (query.state.data?.status === 'deploying' ? 2_000 : 10_000),
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
        {allows(me, 'services:operate') ? <Actions service={data} /> : null}
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
      <TabContent tab={tab} service={data} me={me} />
    </>
  );
}

function TabContent({ tab, service, me }: { tab: ServiceTab; service: Service; me: Me }) {
  switch (tab) {
    case 'overview':
      return <OverviewTab service={service} />;
    case 'deployments':
      return <DeploymentsTab service={service} canOperate={allows(me, 'services:operate')} />;
    case 'logs':
      return <LogsTab serviceId={service.id} />;
    case 'jobs':
      return <JobsTab service={service} canOperate={allows(me, 'services:operate')} />;
    case 'terminal':
      return <TerminalTab service={service} canOperate={allows(me, 'services:operate')} />;
    case 'backups':
      return <BackupsTab service={service} me={me} />;
    case 'events':
      return <EventsTab serviceId={service.id} />;
    case 'settings':
      return <SettingsTab service={service} me={me} />;
  }
}

type ActionResult = NonNullable<ReturnType<typeof useServiceAction>['data']>;

const ACTION_LABELS: Record<LifecycleAction, string> = {
  redeploy: 'Redeploy',
  start: 'Start',
  stop: 'Stop',
  restart: 'Restart',
  rollback: 'Rollback',
};

/**
 * Actions that take the service away from its visitors ask first, as Delete does: Stop ends
 * answering until a start, Rollback replaces what runs with the release before it.
 */
const ASKS_FIRST: Partial<Record<LifecycleAction, { question: (name: string) => string; confirm: string }>> =
  {
    stop: {
      question: (name) => `Stop ${name}? It stops answering until it is started again.`,
      confirm: 'Stop service',
    },
    rollback: {
      question: (name) =>
        `Roll ${name} back to the release before the current one? Its image, compose and variables come back.`,
      confirm: 'Roll back',
    },
  };

function Actions({ service }: { service: Service }) {
  const action = useServiceAction(service.id);
  const [asking, setAsking] = useState<LifecycleAction | null>(null);
  const shown: LifecycleAction[] = [
    'redeploy',
    service.status === 'stopped' ? 'start' : 'stop',
    'restart',
    'rollback',
  ];
  const question = asking ? ASKS_FIRST[asking] : undefined;
  return (
    <>
      {shown.map((name) => (
        <button
          key={name}
          type="button"
          className={name === 'redeploy' ? 'primary' : undefined}
          disabled={action.isPending}
          aria-expanded={ASKS_FIRST[name] ? asking === name : undefined}
          onClick={() => (ASKS_FIRST[name] ? setAsking(name) : action.mutate(name))}
        >
          {ACTION_LABELS[name]}
        </button>
      ))}
      {action.isPending ? (
        <span className="muted" aria-live="polite">
          Working…
        </span>
      ) : null}
      {asking && question ? (
        <ConfirmQuestion
          label={`Confirm ${ACTION_LABELS[asking].toLowerCase()}`}
          question={question.question(service.name)}
          confirm={question.confirm}
          onConfirm={() => {
            action.mutate(asking);
            setAsking(null);
          }}
          onCancel={() => setAsking(null)}
        />
      ) : null}
      <div className="action-result">
        <ProblemAlert error={action.error} />
        <ActionOutcome serviceId={service.id} result={action.data} />
      </div>
    </>
  );
}

/**
 * What the last action did, announced politely: start/stop/restart answer with a message; a
 * redeploy (or rollback) queues a deployment, which the notice names and links to, so the click is
 * never silent while the deployment waits for a worker.
 */
function ActionOutcome({ serviceId, result }: { serviceId: string; result: ActionResult | undefined }) {
  if (!result) return null;
  if ('deploy_job_id' in result && typeof result.deploy_job_id === 'string') {
    return (
      <p className="notice" role="status">
        Deployment {result.deploy_job_id.slice(0, 8)} queued.{' '}
        <Link to={servicePath(serviceId, 'deployments')}>Follow it on the Deployments tab</Link>
      </p>
    );
  }
  return 'message' in result && typeof result.message === 'string' ? (
    <p className="notice" role="status">
      {result.message}
    </p>
  ) : null;
}
