import type { Service } from '@hostctl/api-client';
import { StatusBadge } from '../components/feedback.tsx';
import { dateTime, timeAgo } from '../format.ts';
import { ResourceHistory } from './ResourceHistory.tsx';

/** Status, address, health, resources, domains and the resource history of one service. */
export function OverviewTab({ service }: { service: Service }) {
  const { health, resources } = service;
  return (
    <>
      <div className="columns">
        <section className="card" aria-labelledby="about-heading">
          <h2 id="about-heading">Service</h2>
          <dl className="facts">
            <dt>Status</dt>
            <dd>
              <StatusBadge status={service.status} />
            </dd>
            <dt>URL</dt>
            <dd>
              <a href={service.url} target="_blank" rel="noreferrer">
                {service.url}
              </a>
            </dd>
            <dt>Customer</dt>
            <dd>{service.customer_name}</dd>
            <dt>Method</dt>
            <dd>{service.template ? `template ${service.template}` : service.deploy_method}</dd>
            {service.git_url ? (
              <>
                <dt>Repository</dt>
                <dd>
                  {service.git_url}
                  {service.git_branch ? ` (${service.git_branch})` : ''}
                </dd>
              </>
            ) : null}
            <dt>Deployed</dt>
            <dd title={dateTime(service.deployed_at)}>{timeAgo(service.deployed_at)}</dd>
            <dt>Created</dt>
            <dd>{dateTime(service.created_at)}</dd>
          </dl>
        </section>
        <section className="card" aria-labelledby="health-heading">
          <h2 id="health-heading">Health</h2>
          <dl className="facts">
            <dt>Health</dt>
            <dd>
              <StatusBadge status={health.status} />
            </dd>
            <dt>Last check</dt>
            <dd title={dateTime(health.last_check)}>{timeAgo(health.last_check)}</dd>
            <dt>Failures in a row</dt>
            <dd>{health.consecutive_failures}</dd>
          </dl>
        </section>
        <section className="card" aria-labelledby="resources-heading">
          <h2 id="resources-heading">Resources</h2>
          <dl className="facts">
            <dt>CPU</dt>
            <dd>
              {resources.cpu_usage.toFixed(2)} of {resources.cpu_limit} CPU
            </dd>
            <dt>Memory</dt>
            <dd>
              {Math.round(resources.memory_usage_mb)} of {resources.memory_limit_mb} MB
            </dd>
            <dt>Storage</dt>
            <dd>{resources.storage_mb} MB</dd>
          </dl>
        </section>
        <section className="card" aria-labelledby="domains-heading">
          <h2 id="domains-heading">Domains</h2>
          <ul className="plain">
            <li className="row">{new URL(service.url).host}</li>
            {service.custom_domains.map((domain) => (
              <li key={domain} className="row">
                {domain}
              </li>
            ))}
          </ul>
        </section>
      </div>
      <ResourceHistory serviceId={service.id} />
    </>
  );
}
