import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { must, type BackupTarget } from '@hostctl/api-client';
import { api } from '../api/client.ts';
import { ProblemAlert } from '../components/feedback.tsx';
import { Field, fieldErrors } from '../components/Field.tsx';
import { newTargetBody, targetChangeBody, type TargetFormValues } from './backup-target-body.ts';
import { backupTargetKey } from './backup-target-key.ts';

const FIELDS = [
  ['endpoint', 'Endpoint', 'https://host[:port] of the S3-compatible service', 'url'],
  ['bucket', 'Bucket', 'it must exist already', 'text'],
  ['prefix', 'Prefix', 'the repository is <prefix>/<customer id> (default hostctl)', 'text'],
  ['region', 'Region', 'default us-east-1', 'text'],
  ['access_key_id', 'Access key ID', 'write-only: never shown again', 'text'],
  ['secret_access_key', 'Secret access key', 'write-only: never shown again', 'password'],
] as const;
type Key = (typeof FIELDS)[number][0];

/**
 * Sets a customer's own backup bucket, or changes the stored one
 * (docs/backups.md#a-customers-own-target). A new target is a PUT of the whole; a stored one is
 * changed with a PATCH of the fields that differ, because the API never gives the keys or the CA
 * back: left empty, they stay as stored (the API refuses to keep the keys for another endpoint,
 * bucket or key id, naming the secret's field).
 */
export function BackupTargetForm(props: {
  customerId: string;
  target: BackupTarget | null;
  onSaved: () => void;
  onCancel: () => void;
}) {
  const { customerId, onSaved, onCancel } = props;
  const queries = useQueryClient();
  // The target as the form opened on it: a change is what the user changed from that, so a field
  // someone else changed meanwhile and this user left alone is not put back.
  const [target] = useState(props.target);
  const [values, setValues] = useState<TargetFormValues>({
    endpoint: target?.endpoint ?? '',
    bucket: target?.bucket ?? '',
    prefix: target?.prefix ?? '',
    region: target?.region ?? '',
    access_key_id: '',
    secret_access_key: '',
    ca_certificate: '',
    remove_ca_certificate: false,
  });
  const save = useMutation({
    mutationFn: (body: TargetFormValues) => {
      const params = { path: { id: customerId } };
      return must(
        target
          ? api.PATCH('/api/customers/{id}/backup-target', { params, body: targetChangeBody(target, body) })
          : api.PUT('/api/customers/{id}/backup-target', { params, body: newTargetBody(body) }),
      );
    },
    onSuccess: (saved) => {
      queries.setQueryData(backupTargetKey(customerId), saved);
      onSaved();
    },
  });
  const errors = fieldErrors(save.error);
  const keyHint = {
    access_key_id: 'write-only: leave empty to keep the stored one; a new one needs its secret key',
    secret_access_key:
      'write-only: leave empty to keep the stored one (only while the endpoint, bucket and key ID stay)',
  } as const;
  const isKey = (key: Key): key is keyof typeof keyHint => key in keyHint;
  const keepsKeys = target?.has_credentials === true;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate(values);
  };
  return (
    <form
      className="stack"
      onSubmit={submit}
      aria-label={target ? 'Change the backup target' : 'Set the backup target'}
    >
      {FIELDS.map(([key, label, hint, type]) => (
        <Field
          key={key}
          id={`backup-target-${key}`}
          label={label}
          hint={keepsKeys && isKey(key) ? keyHint[key] : hint}
          error={errors.get(key)}
        >
          {(control) => (
            <input
              {...control}
              type={type}
              value={values[key]}
              required={key !== 'prefix' && key !== 'region' && !(keepsKeys && isKey(key))}
              autoComplete={type === 'password' ? 'new-password' : 'off'}
              onChange={(e) => setValues((v) => ({ ...v, [key]: e.target.value }))}
            />
          )}
        </Field>
      ))}
      <Field
        id="backup-target-ca_certificate"
        label="CA certificate (optional)"
        hint={
          target?.has_ca_certificate
            ? 'PEM; one is stored (never shown): leave empty to keep it, paste another to replace it'
            : 'PEM certificates to trust instead of the public CA bundle'
        }
        error={errors.get('ca_certificate')}
      >
        {(control) => (
          <textarea
            {...control}
            className="code"
            rows={3}
            value={values.ca_certificate}
            onChange={(e) => setValues((v) => ({ ...v, ca_certificate: e.target.value }))}
          />
        )}
      </Field>
      {target?.has_ca_certificate ? (
        <label className="inline">
          <input
            type="checkbox"
            checked={values.remove_ca_certificate}
            disabled={values.ca_certificate.trim() !== ''}
            onChange={(e) => setValues((v) => ({ ...v, remove_ca_certificate: e.target.checked }))}
          />
          Remove the stored CA certificate (trust the public CA bundle again)
        </label>
      ) : null}
      <ProblemAlert error={save.error} />
      <div className="form-row">
        <button type="submit" className="primary" disabled={save.isPending}>
          Save target
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
