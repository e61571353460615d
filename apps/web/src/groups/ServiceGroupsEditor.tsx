import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import type { Service } from '@hostctl/api-client';
import { ProblemAlert } from '../components/feedback.tsx';
import { variableGroupPath } from '../routes.ts';
import { Link } from '../router.tsx';
import { invalidateService } from '../service/actions.ts';
import { changeAttachment, isStale, refreshGroupLists, useCustomerGroups } from './group-api.ts';

/**
 * The variable groups a service uses, in order (docs/secrets.md#variable-groups): a later group's
 * value wins over an earlier one's, the service's own over any group's. Each change attaches (at a
 * position, which moves an attached group) or detaches one group, conditional on the version of
 * the group this page listed, and redeploys the service. Viewers see the names only.
 */
export function ServiceGroupsEditor({ service, canEdit }: { service: Service; canEdit: boolean }) {
  const queries = useQueryClient();
  const groups = useCustomerGroups(service.customer_id);
  const [chosen, setChosen] = useState('');
  const [status, setStatus] = useState<string | null>(null);
  const save = useMutation({
    mutationFn: ({ verb, id, position }: { verb: 'attach' | 'detach'; id: string; position?: number }) => {
      // The version the list showed (the customer's groups all fit in it; else none to hold it to).
      const group = (groups.data?.data ?? []).find((item) => item.id === id) ?? { id };
      return changeAttachment({ verb, group }, service.id, position);
    },
    onSuccess: (answer) =>
      setStatus(
        answer.deploy_job_id
          ? 'Groups saved; a redeploy applying them has been queued.'
          : 'Nothing changed: the groups were already so.',
      ),
    onSettled: async () => {
      await invalidateService(queries, service.id);
      await refreshGroupLists(queries);
    },
  });
  const names = new Map((groups.data?.data ?? []).map((group) => [group.id, group.name]));
  const attached = service.variable_groups;
  const available = (groups.data?.data ?? []).filter((group) => !attached.includes(group.id));
  const change = (verb: 'attach' | 'detach', id: string, position?: number) => {
    setStatus(null);
    save.mutate({ verb, id, ...(position !== undefined ? { position } : {}) });
  };
  // Positions count from 1: moving the group at `index` by one place.
  const move = (index: number, by: -1 | 1) => {
    const id = attached[index];
    if (id !== undefined) change('attach', id, index + 1 + by);
  };
  const nameOf = (id: string) => names.get(id) ?? id;

  return (
    <section className="card" aria-labelledby="groups-settings-heading">
      <h2 id="groups-settings-heading">Variable groups</h2>
      <p className="muted">
        Applied in this order: a later group wins over an earlier one, this service&apos;s own variables win
        over every group.
      </p>
      {attached.length === 0 ? <p className="muted">No variable groups attached.</p> : null}
      <ol className="plain" aria-label="Attached variable groups, in order">
        {attached.map((id, index) => (
          <li key={id} className="row">
            <Link to={variableGroupPath(id)}>{nameOf(id)}</Link>
            {canEdit ? (
              <>
                <button
                  type="button"
                  className="ghost"
                  aria-label={`Move ${nameOf(id)} up`}
                  disabled={save.isPending || index === 0}
                  onClick={() => move(index, -1)}
                >
                  Up
                </button>
                <button
                  type="button"
                  className="ghost"
                  aria-label={`Move ${nameOf(id)} down`}
                  disabled={save.isPending || index === attached.length - 1}
                  onClick={() => move(index, 1)}
                >
                  Down
                </button>
                <button
                  type="button"
                  className="ghost"
                  aria-label={`Detach ${nameOf(id)}`}
                  disabled={save.isPending}
                  onClick={() => change('detach', id)}
                >
                  Detach
                </button>
              </>
            ) : null}
          </li>
        ))}
      </ol>
      {canEdit ? (
        <form
          className="form-row"
          onSubmit={(event) => {
            event.preventDefault();
            if (!chosen) return;
            change('attach', chosen);
            setChosen('');
          }}
        >
          <label>
            Group to attach
            <select value={chosen} onChange={(e) => setChosen(e.target.value)}>
              <option value="">{available.length === 0 ? 'No other group' : 'Choose a group'}</option>
              {available.map((group) => (
                <option key={group.id} value={group.id}>
                  {group.name}
                </option>
              ))}
            </select>
          </label>
          <button type="submit" disabled={save.isPending || !chosen}>
            Attach group
          </button>
        </form>
      ) : null}
      <ProblemAlert error={groups.error} />
      {isStale(save.error) ? (
        <p className="notice" role="status">
          A group changed since this page listed it; the list has been read again. Check it and try again.
        </p>
      ) : (
        <ProblemAlert error={save.error} />
      )}
      {status ? (
        <p className="notice" role="status">
          {status}
        </p>
      ) : null}
    </section>
  );
}
