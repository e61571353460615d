import type { BackupTarget, JsonBody } from '@hostctl/api-client';

type TargetPut = JsonBody<'/api/customers/{id}/backup-target', 'put'>;
type TargetPatch = JsonBody<'/api/customers/{id}/backup-target', 'patch'>;

/** What the backup target form holds: every field as typed, empty when left blank. */
export interface TargetFormValues {
  endpoint: string;
  bucket: string;
  prefix: string;
  region: string;
  access_key_id: string;
  secret_access_key: string;
  ca_certificate: string;
  /** Only while a CA is stored: send `null` to remove it. */
  remove_ca_certificate: boolean;
}

/** A new target (PUT): an empty prefix or region takes the API's default. */
export function newTargetBody(values: TargetFormValues): TargetPut {
  return {
    endpoint: values.endpoint,
    bucket: values.bucket,
    prefix: values.prefix || undefined,
    region: values.region || undefined,
    access_key_id: values.access_key_id,
    secret_access_key: values.secret_access_key,
    ca_certificate: values.ca_certificate.trim() || null,
  };
}

/**
 * A change to the stored target (PATCH): only the fields that differ from it, so what the form
 * left alone stays as stored, the key pair and the CA above all, which the API never gives back
 * and the user cannot retype. A cleared prefix or region goes back to its default (`null`).
 */
export function targetChangeBody(stored: BackupTarget, values: TargetFormValues): TargetPatch {
  const change: TargetPatch = {};
  if (values.endpoint !== stored.endpoint) change.endpoint = values.endpoint;
  if (values.bucket !== stored.bucket) change.bucket = values.bucket;
  if (values.prefix !== stored.prefix) change.prefix = values.prefix || null;
  if (values.region !== stored.region) change.region = values.region || null;
  // Sent as typed: a key id without its secret is the API's 400 naming the secret's field.
  if (values.access_key_id) change.access_key_id = values.access_key_id;
  if (values.secret_access_key) change.secret_access_key = values.secret_access_key;
  const caPem = values.ca_certificate.trim();
  if (caPem) change.ca_certificate = caPem;
  else if (values.remove_ca_certificate) change.ca_certificate = null;
  return change;
}
