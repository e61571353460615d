import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { must, ProblemError } from '@hostctl/api-client';
import { api } from '../api/client.ts';
import { ConfirmQuestion } from '../components/ConfirmQuestion.tsx';
import { ListState, ProblemAlert } from '../components/feedback.tsx';
import { dateTime } from '../format.ts';
import { backupTargetKey } from './backup-target-key.ts';
import { BackupTargetForm } from './BackupTargetForm.tsx';

/** The customer's target, or null while it has none (the API's 404 for a customer it shows). */
async function fetchTarget(customerId: string) {
  try {
    return await must(api.GET('/api/customers/{id}/backup-target', { params: { path: { id: customerId } } }));
  } catch (error) {
    if (error instanceof ProblemError && error.status === 404) return null;
    throw error;
  }
}

/**
 * A customer's own backup bucket (docs/backups.md#a-customers-own-target): where it is and whether
 * its credentials are set (never their values), with Set, Change and Remove. Shown only to those
 * who may manage the customer: even reading it needs `customers:manage`.
 */
export function BackupTargetSection({ customerId }: { customerId: string }) {
  const queries = useQueryClient();
  const [editing, setEditing] = useState(false);
  const [asking, setAsking] = useState(false);
  const [saved, setSaved] = useState('');
  const target = useQuery({ queryKey: backupTargetKey(customerId), queryFn: () => fetchTarget(customerId) });
  const remove = useMutation({
    mutationFn: () =>
      must(api.DELETE('/api/customers/{id}/backup-target', { params: { path: { id: customerId } } })),
    onSuccess: () => {
      queries.setQueryData(backupTargetKey(customerId), null);
      setAsking(false);
      setSaved('Backup target removed: new backups go to the operator’s target.');
    },
  });
  const data = target.data ?? null;
  return (
    <section aria-labelledby="backup-target-heading" className="card">
      <h2 id="backup-target-heading">Backup target</h2>
      <p role="status" className="muted">
        {saved}
      </p>
      <ListState noun="backup target" isPending={target.isPending} error={target.error} isEmpty={false}>
        {data ? (
          <dl className="facts">
            <dt>Endpoint</dt>
            <dd>
              <code>{data.endpoint}</code>
            </dd>
            <dt>Bucket</dt>
            <dd>{data.bucket}</dd>
            <dt>Prefix</dt>
            <dd>{data.prefix}</dd>
            <dt>Region</dt>
            <dd>{data.region}</dd>
            <dt>Credentials</dt>
            <dd>{data.has_credentials ? 'set (not shown)' : 'not set'}</dd>
            <dt>CA certificate</dt>
            <dd>{data.has_ca_certificate ? 'stored' : 'none (the public CA bundle)'}</dd>
            <dt>Changed</dt>
            <dd>{dateTime(data.updated_at)}</dd>
          </dl>
        ) : (
          <p className="muted">No target of its own: backups go to the operator’s target.</p>
        )}
      </ListState>
      {editing ? (
        <BackupTargetForm
          customerId={customerId}
          target={data}
          onSaved={() => {
            setEditing(false);
            setSaved('Backup target saved: new backups go to this bucket.');
          }}
          onCancel={() => setEditing(false)}
        />
      ) : asking ? (
        <ConfirmQuestion
          label="Confirm removing the backup target"
          question="Remove the backup target? New backups go to the operator’s target; backups already in the bucket can no longer be restored until it is set back."
          confirm="Remove target"
          busy={remove.isPending}
          onConfirm={() => remove.mutate()}
          onCancel={() => setAsking(false)}
        />
      ) : target.isSuccess ? (
        <div className="form-row">
          <button type="button" onClick={() => setEditing(true)}>
            {data ? 'Change target' : 'Set a target'}
          </button>
          {data ? (
            <button type="button" className="danger" onClick={() => setAsking(true)}>
              Remove target
            </button>
          ) : null}
        </div>
      ) : null}
      <ProblemAlert error={remove.error} />
    </section>
  );
}
