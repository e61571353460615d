import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../api/client.ts';
import { must, type Me, type Service } from '@hostctl/api-client';
import { ProblemAlert } from '../components/feedback.tsx';
import { TypeToConfirm } from '../components/TypeToConfirm.tsx';
import { ServiceGroupsEditor } from '../groups/ServiceGroupsEditor.tsx';
import { navigate } from '../router.tsx';
import { allows } from '../permissions.ts';
import { invalidateService } from './actions.ts';
import { DomainStatus, useDomainStates } from './DomainStatus.tsx';
import { SecretVariablesEditor } from './SecretVariablesEditor.tsx';
import { VariablesEditor } from './VariablesEditor.tsx';
import { WebhookSettings } from './WebhookSettings.tsx';

/** Variables, variable groups, custom domains, the push webhook and the danger zone. Viewers see the values they may read, no controls. */
export function SettingsTab({ service, me }: { service: Service; me: Me }) {
  const canOperate = allows(me, 'services:operate');
  return (
    <>
      <VariablesEditor service={service} canEdit={canOperate} />
      <SecretVariablesEditor service={service} canEdit={canOperate} />
      <ServiceGroupsEditor service={service} canEdit={canOperate} />
      <DomainsEditor service={service} canEdit={canOperate} />
      {service.deploy_method === 'git' || service.deploy_method === 'ai' ? (
        <WebhookSettings service={service} canEdit={canOperate} />
      ) : null}
      {allows(me, 'services:delete') ? <DangerZone service={service} /> : null}
    </>
  );
}

function DomainsEditor({ service, canEdit }: { service: Service; canEdit: boolean }) {
  const queries = useQueryClient();
  const [domain, setDomain] = useState('');
  const states = useDomainStates(service.id);
  const save = useMutation({
    mutationFn: (domains: string[]) =>
      must(
        api.PATCH('/api/services/{id}', {
          params: { path: { id: service.id } },
          body: { custom_domains: domains },
        }),
      ),
    onSuccess: () => setDomain(''),
    onSettled: async () => {
      await invalidateService(queries, service.id);
      await queries.invalidateQueries({ queryKey: ['custom-domains', service.id] });
    },
  });
  return (
    <section className="card" aria-labelledby="domains-settings-heading">
      <h2 id="domains-settings-heading">Custom domains</h2>
      {service.custom_domains.length === 0 ? <p className="muted">No custom domains.</p> : null}
      <ul className="plain">
        {service.custom_domains.map((name) => (
          <li key={name} className="row">
            <span>{name}</span>
            <DomainStatus state={states.get(name)} />
            {canEdit ? (
              <button
                type="button"
                className="ghost"
                aria-label={`Remove ${name}`}
                disabled={save.isPending}
                onClick={() => save.mutate(service.custom_domains.filter((d) => d !== name))}
              >
                Remove
              </button>
            ) : null}
          </li>
        ))}
      </ul>
      {canEdit ? (
        <form
          className="form-row"
          onSubmit={(event) => {
            event.preventDefault();
            if (domain.trim()) save.mutate([...service.custom_domains, domain.trim().toLowerCase()]);
          }}
        >
          <label>
            Domain
            <input value={domain} onChange={(e) => setDomain(e.target.value)} placeholder="app.example.com" />
          </label>
          <button type="submit" disabled={save.isPending || !domain.trim()}>
            Add domain
          </button>
        </form>
      ) : null}
      <ProblemAlert error={save.error} />
    </section>
  );
}

/** Deleting asks for the service's name typed in (TypeToConfirm). */
function DangerZone({ service }: { service: Service }) {
  const queries = useQueryClient();
  const remove = useMutation({
    mutationFn: () => must(api.DELETE('/api/services/{id}', { params: { path: { id: service.id } } })),
    onSuccess: async () => {
      queries.removeQueries({ queryKey: ['service', service.id] });
      await queries.invalidateQueries({ queryKey: ['services'] });
      navigate('/services');
    },
  });
  return (
    <section className="card danger-zone" aria-labelledby="danger-heading">
      <h2 id="danger-heading">Danger zone</h2>
      <p>Deleting removes the service&apos;s containers, volumes, routes and history. It cannot be undone.</p>
      <TypeToConfirm
        noun="service"
        name={service.name}
        action="Delete service"
        busy={remove.isPending}
        onConfirm={() => remove.mutate()}
      />
      <ProblemAlert error={remove.error} />
    </section>
  );
}
