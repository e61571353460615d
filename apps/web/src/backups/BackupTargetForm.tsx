import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { must, type BackupTarget } from '@hostctl/api-client';
import { api } from '../api/client.ts';
import { ProblemAlert } from '../components/feedback.tsx';
import { Field, fieldErrors } from '../components/Field.tsx';
import { backupTargetKey } from './backup-target-key.ts';

const FIELDS = [
  ['endpoint', 'Endpoint', 'https://host[:port] of the S3-compatible service', 'url'],
  ['bucket', 'Bucket', 'it must exist already', 'text'],
  ['prefix', 'Prefix', 'the repository is <prefix>/<customer id> (default hostctl)', 'text'],
  ['region', 'Region', 'default us-east-1', 'text'],
  ['access_key_id', 'Access key ID', 'write-only: never shown again', 'text'],
  ['secret_access_key', 'Secret access key', 'write-only: never shown again', 'password'],
] as const;
type Values = Record<(typeof FIELDS)[number][0] | 'ca_certificate', string>;

/**
 * Sets or replaces a customer's own backup bucket (PUT replaces it whole:
 * docs/backups.md#a-customers-own-target). The form starts from the target's visible fields; the
 * API never gives the keys back, so while a target is stored they may be left empty to keep the
 * stored ones (the API refuses that when the endpoint or bucket changes, naming the field).
 */
export function BackupTargetForm(props: {
  customerId: string;
  target: BackupTarget | null;
  onSaved: () => void;
  onCancel: () => void;
}) {
  const { customerId, target, onSaved, onCancel } = props;
  const queries = useQueryClient();
  const [values, setValues] = useState<Values>({
    endpoint: target?.endpoint ?? '',
    bucket: target?.bucket ?? '',
    prefix: target?.prefix ?? '',
    region: target?.region ?? '',
    access_key_id: '',
    secret_access_key: '',
    ca_certificate: '',
  });
  const save = useMutation({
    mutationFn: (body: Values) =>
      must(
        api.PUT('/api/customers/{id}/backup-target', {
          params: { path: { id: customerId } },
          // An empty prefix or region is left out: the API's defaults apply.
          body: {
            ...body,
            prefix: body.prefix || undefined,
            region: body.region || undefined,
            ca_certificate: body.ca_certificate.trim() || null,
            // Left empty: the stored credentials are kept (same endpoint and bucket only).
            access_key_id: body.access_key_id || undefined,
            secret_access_key: body.secret_access_key || undefined,
          },
        }),
      ),
    onSuccess: (saved) => {
      queries.setQueryData(backupTargetKey(customerId), saved);
      onSaved();
    },
  });
  const errors = fieldErrors(save.error);
  const isKey = (key: string) => key === 'access_key_id' || key === 'secret_access_key';
  const keepsKeys = target?.has_credentials === true;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate(values);
  };
  return (
    <form className="stack" onSubmit={submit} aria-label="Set the backup target">
      {FIELDS.map(([key, label, hint, type]) => (
        <Field
          key={key}
          id={`backup-target-${key}`}
          label={label}
          hint={
            keepsKeys && isKey(key)
              ? 'write-only: leave empty to keep the stored one (only while the endpoint and bucket stay)'
              : hint
          }
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
            ? 'PEM; one is stored and the API never gives it back: paste it again to keep it, saving without one removes it'
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
