import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { must, type Me } from '@hostctl/api-client';
import { api } from '../api/client.ts';
import { ProblemAlert } from '../components/feedback.tsx';
import { PageHeading } from '../components/page.tsx';
import { SecretsForm } from '../components/SecretsForm.tsx';
import { TypeToConfirm } from '../components/TypeToConfirm.tsx';
import { VariablesForm, type VariableChanges } from '../components/VariablesForm.tsx';
import { useCustomerNames } from '../customer-names.ts';
import { dateTime } from '../format.ts';
import { allows } from '../permissions.ts';
import { navigate } from '../router.tsx';
import { AttachedServices } from './AttachedServices.tsx';
import { RenameGroup } from './RenameGroup.tsx';
import {
  groupKey,
  isStale,
  patchGroup,
  refreshGroupLists,
  useGroup,
  type VariableGroup,
} from './group-api.ts';

const AFTER_SAVE = 'Services using this group get the change at their next deployment (Redeploy them below).';

/**
 * One variable group: its plain and secret variables (every edit conditional on the version shown,
 * so a change someone made meanwhile is a clear "reload" instead of a lost write), the services it
 * is attached to with a redeploy of them all, and deleting it. Viewers see the names only.
 */
export function VariableGroupScreen({ id, me }: { id: string; me: Me }) {
  const queries = useQueryClient();
  const group = useGroup(id);
  // Bumped by Reload: the forms start again from the version just read.
  const [reloads, setReloads] = useState(0);
  const customerNames = useCustomerNames(
    group.data ? [group.data.customer_id] : [],
    group.data !== undefined,
  );
  if (group.isPending) {
    return (
      <div aria-busy="true" className="muted state">
        Loading variable group…
      </div>
    );
  }
  if (group.error) {
    return (
      <>
        <PageHeading title="Variable group" />
        <ProblemAlert error={group.error} />
      </>
    );
  }
  const data = group.data;
  const canEdit = allows(me, 'services:operate');
  const reload = async () => {
    await group.refetch();
    setReloads((n) => n + 1);
  };
  const save = async (body: Parameters<typeof patchGroup>[1]) => {
    const updated = await patchGroup(data, body);
    queries.setQueryData<VariableGroup>(groupKey(id), updated);
    return updated;
  };
  const errorAlert = (error: unknown) => <GroupProblem error={error} onReload={() => void reload()} />;
  const refreshLists = () => refreshGroupLists(queries);

  return (
    <>
      <PageHeading title={data.name} />
      <dl className="facts card">
        <dt>Customer</dt>
        <dd title={data.customer_id}>{customerNames.get(data.customer_id) ?? data.customer_id}</dd>
        <dt>Version</dt>
        <dd>{data.version}</dd>
        <dt>Last change</dt>
        <dd>{dateTime(data.updated_at)}</dd>
      </dl>
      {canEdit ? (
        <RenameGroup
          key={`name-${reloads}`}
          group={data}
          save={(name) => save({ name })}
          onSettled={refreshLists}
          errorAlert={errorAlert}
        />
      ) : null}
      <VariablesForm
        key={`variables-${reloads}`}
        variables={data.variables}
        canEdit={canEdit}
        savedText={`Variables saved. ${AFTER_SAVE}`}
        save={async (changes: VariableChanges) => (await save({ variables: changes })).variables}
        onSettled={refreshLists}
        errorAlert={errorAlert}
      />
      <SecretsForm
        key={`secrets-${reloads}`}
        secrets={data.secret_variables}
        canEdit={canEdit}
        savedText={`Secret saved. ${AFTER_SAVE}`}
        reveal={async (name) =>
          (
            await must(
              api.POST('/api/variable-groups/{id}/secret-variables/reveal', {
                params: { path: { id } },
                body: { name },
              }),
            )
          ).value
        }
        save={(changes) => save({ secret_variables: changes })}
        onSettled={refreshLists}
        errorAlert={errorAlert}
      />
      <AttachedServices groupId={id} canRedeploy={canEdit} />
      {allows(me, 'services:delete') ? <DeleteGroup group={data} /> : null}
    </>
  );
}

/** A 412 says what happened and offers the way out; any other problem shows as usual. */
function GroupProblem({ error, onReload }: { error: unknown; onReload: () => void }) {
  if (!isStale(error)) return <ProblemAlert error={error} />;
  return (
    <div role="alert" className="alert">
      <strong>This group changed meanwhile.</strong>{' '}
      <span>
        Someone saved it after this page loaded it, so your change was not saved. Reload to see the current
        version, then make your change again.
      </span>{' '}
      <button type="button" onClick={onReload}>
        Reload group
      </button>
    </div>
  );
}

function DeleteGroup({ group }: { group: VariableGroup }) {
  const queries = useQueryClient();
  const remove = useMutation({
    mutationFn: () => must(api.DELETE('/api/variable-groups/{id}', { params: { path: { id: group.id } } })),
    onSuccess: async () => {
      queries.removeQueries({ queryKey: groupKey(group.id) });
      await refreshGroupLists(queries);
      navigate('/variable-groups');
    },
  });
  return (
    <section className="card danger-zone" aria-labelledby="delete-group-heading">
      <h2 id="delete-group-heading">Delete this group</h2>
      <p>
        A group attached to services cannot be deleted: detach it in each service&apos;s settings first.
        Deleting cannot be undone.
      </p>
      <TypeToConfirm
        noun="group"
        name={group.name}
        action="Delete group"
        busy={remove.isPending}
        onConfirm={() => remove.mutate()}
      />
      <ProblemAlert error={remove.error} />
    </section>
  );
}
