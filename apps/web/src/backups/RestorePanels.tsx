import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { must, type Backup, type Service } from '@hostctl/api-client';
import { api } from '../api/client.ts';
import { ConfirmQuestion } from '../components/ConfirmQuestion.tsx';
import { ProblemAlert } from '../components/feedback.tsx';
import { Field, fieldErrors } from '../components/Field.tsx';
import { dateTime } from '../format.ts';
import { invalidateService } from '../service/actions.ts';
import { refreshBackups } from './backup-api.ts';
import { volumeNames } from './backup-format.ts';

interface PanelProps {
  service: Service;
  backup: Backup;
  /** The outcome, for the tab's status line. */
  onDone: (message: string) => void;
  onCancel: () => void;
}

/**
 * What a restore in place does, asked before it is done (docs/backups.md#restore): which volumes
 * are replaced by the backup's contents, that a running service stops while they are swapped,
 * and that the release running stays the current one.
 */
function restoreQuestion(service: Service, backup: Backup): string {
  const volumes = backup.volumes.length === 1 ? 'volume' : 'volumes';
  const parts = [
    `Restore ${service.name} from the backup of ${dateTime(backup.created_at)}?`,
    `The current contents of its ${volumes} ${volumeNames(backup)} are replaced by the backup's.`,
    service.status === 'running'
      ? `${service.name} stops while the volumes are swapped and starts again afterwards.`
      : `${service.name} is ${service.status}: it is started after the swap.`,
    'The current data is kept until the restore succeeded; the release running now stays.',
  ];
  return parts.join(' ');
}

export function RestoreQuestion({ service, backup, onDone, onCancel }: PanelProps) {
  const queries = useQueryClient();
  const restore = useMutation({
    mutationFn: () => must(api.POST('/api/backups/{id}/restore', { params: { path: { id: backup.id } } })),
    onSuccess: (run) =>
      onDone(`Restore ${run.id.slice(0, 8)} queued; the Last restore column follows it until it ends.`),
    onSettled: () =>
      Promise.all([refreshBackups(queries, service.id), invalidateService(queries, service.id)]),
  });
  return (
    <>
      <ConfirmQuestion
        label="Confirm restore"
        question={restoreQuestion(service, backup)}
        confirm="Restore and replace the data"
        busy={restore.isPending}
        onConfirm={() => restore.mutate()}
        onCancel={onCancel}
      />
      <ProblemAlert error={restore.error} />
    </>
  );
}

/**
 * A restore into a new service (POST /api/backups/:id/clone): asks the new service's name; the
 * API checks it as a create does, and what it refuses is shown under the field or above the form.
 */
export function CloneForm({ service, backup, onDone, onCancel }: PanelProps) {
  const queries = useQueryClient();
  const [name, setName] = useState(`${service.name}-restored`.slice(0, 63));
  const clone = useMutation({
    mutationFn: (newName: string) =>
      must(
        api.POST('/api/backups/{id}/clone', {
          params: { path: { id: backup.id } },
          body: { name: newName },
        }),
      ),
    onSuccess: (_run, newName) =>
      onDone(
        `Restoring into the new service ${newName}; it deploys once its volumes hold the backup's data.`,
      ),
    onSettled: () =>
      Promise.all([
        refreshBackups(queries, service.id),
        queries.invalidateQueries({ queryKey: ['services'] }),
      ]),
  });
  const errors = fieldErrors(clone.error);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    clone.mutate(name.trim());
  };
  const id = `clone-${backup.id}`;
  return (
    <section className="card" aria-labelledby={`${id}-heading`}>
      <h3 id={`${id}-heading`}>Restore into a new service</h3>
      <p className="muted">
        A new service of the same customer, with the definition the backup&apos;s release ran and the
        backup&apos;s data in its volumes ({volumeNames(backup) || 'none'}). {service.name} is left as it is.
      </p>
      <form className="stack" onSubmit={submit}>
        <Field
          id={`${id}-name`}
          label="Name of the new service"
          hint="Lowercase letters, digits and hyphens"
          error={errors.get('name')}
        >
          {(control) => (
            <input {...control} value={name} required autoFocus onChange={(e) => setName(e.target.value)} />
          )}
        </Field>
        <ProblemAlert error={clone.error} />
        <div className="form-row">
          <button type="submit" className="primary" disabled={clone.isPending}>
            Create and restore
          </button>
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        </div>
      </form>
    </section>
  );
}
