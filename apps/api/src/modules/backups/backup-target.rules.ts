import type { OwnBackupTarget } from '@hostctl/db';
import { DomainError, validationError } from '@hostctl/domain';
import { checkBackupEndpoint, type GitUrlOptions } from '@hostctl/source-policy';

/**
 * The rules of a customer's own backup target (docs/backups.md#a-customers-own-target), shared by
 * PUT (the whole target) and PATCH (the fields given): what each field may hold, and when the
 * stored secret may stay with a changed target.
 */

// The worker's own checks of the operator's S3 target (s3-target.ts), field by field.
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
const PREFIX = /^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/;
const REGION = /^[a-z0-9-]{1,40}$/;
const PEM = /^-----BEGIN CERTIFICATE-----[\s\S]+-----END CERTIFICATE-----\s*$/;

export const DEFAULT_PREFIX = 'hostctl';
export const DEFAULT_REGION = 'us-east-1';

/** The fields a body sets, as they would be stored; a field the body leaves out is absent. */
interface TargetFieldsGiven {
  endpoint?: string | undefined;
  bucket?: string | undefined;
  /** null: back to the default. */
  prefix?: string | null | undefined;
  region?: string | null | undefined;
  ca_certificate?: string | null | undefined;
}

interface CheckedFields {
  endpoint?: string;
  bucket?: string;
  prefix?: string;
  region?: string;
  caPem?: string | null;
}

/**
 * Checks each given field and answers it as stored (the endpoint as `scheme://host:port`, the
 * defaults for null), or one 400 naming every bad field. The endpoint passes the source policy
 * notification URLs share (BACKUP_TARGET_ALLOWED_HOSTS, no internal address), without the network.
 */
export function checkTargetFields(body: TargetFieldsGiven, endpointPolicy: GitUrlOptions): CheckedFields {
  const errors: { path: string; message: string }[] = [];
  const checked: CheckedFields = {};
  if (body.endpoint !== undefined) {
    const verdict = checkBackupEndpoint(body.endpoint, endpointPolicy);
    if (!verdict.ok) errors.push({ path: '/body/endpoint', message: verdict.reason });
    else {
      const { scheme, host, port } = verdict.endpoint;
      checked.endpoint = `${scheme}://${host}:${port}`;
    }
  }
  if (body.bucket !== undefined) {
    if (BUCKET.test(body.bucket)) checked.bucket = body.bucket;
    else
      errors.push({
        path: '/body/bucket',
        message: 'must be 3-63 lower-case letters, digits, dots and dashes',
      });
  }
  if (body.prefix !== undefined) {
    const prefix = (body.prefix ?? DEFAULT_PREFIX).replace(/^\/+|\/+$/g, '');
    if (prefix === '' || PREFIX.test(prefix)) checked.prefix = prefix;
    else
      errors.push({
        path: '/body/prefix',
        message: 'may hold letters, digits, ".", "_", "-" and "/" between parts',
      });
  }
  if (body.region !== undefined) {
    const region = body.region ?? DEFAULT_REGION;
    if (REGION.test(region)) checked.region = region;
    else errors.push({ path: '/body/region', message: 'must be lower-case letters, digits and dashes' });
  }
  if (body.ca_certificate !== undefined) {
    const caPem = body.ca_certificate;
    if (caPem === null) checked.caPem = null;
    else if (PEM.test(caPem.trim())) checked.caPem = `${caPem.trim()}\n`;
    else
      errors.push({
        path: '/body/ca_certificate',
        message: 'must be PEM certificates (BEGIN CERTIFICATE … END CERTIFICATE)',
      });
  }
  const [first] = errors;
  if (first) {
    if (errors.length === 1) throw validationError(first.path, first.message);
    const detail = errors.map((error) => `${error.path}: ${error.message}`).join('; ');
    throw new DomainError('validation_failed', detail, { errors });
  }
  return checked;
}

interface Credentials {
  accessKeyId: string;
  secretAccessKey: string;
}

/**
 * The credentials a write stores: the body's, or, when it leaves the secret out, the stored ones,
 * but only for the same endpoint and bucket (a user editing the prefix need not retype the secret;
 * the secret never follows to another place, where its owner did not send it) and the same key
 * id. `place` is where the target will point, the endpoint as stored (`https://host:port`).
 * `kept`: they are the stored ones, so a PATCH need not write them.
 */
export function credentialsFor(
  stored: OwnBackupTarget | null,
  given: { access_key_id?: string | undefined; secret_access_key?: string | undefined },
  place: { endpoint: string; bucket: string },
): Credentials & { kept: boolean } {
  if (given.secret_access_key !== undefined) {
    if (given.access_key_id === undefined)
      throw validationError('/body/access_key_id', 'is required with a secret_access_key');
    return { accessKeyId: given.access_key_id, secretAccessKey: given.secret_access_key, kept: false };
  }
  if (!stored || stored.secretAccessKey === '')
    throw validationError('/body/secret_access_key', 'is required: no credentials are stored yet');
  if (stored.endpoint !== place.endpoint || stored.bucket !== place.bucket)
    throw validationError(
      '/body/secret_access_key',
      'is required when the endpoint or the bucket changes: the stored secret stays with the place it was given for',
    );
  if (given.access_key_id !== undefined && given.access_key_id !== stored.accessKeyId)
    throw validationError('/body/secret_access_key', 'is required with a new access_key_id');
  return { accessKeyId: stored.accessKeyId, secretAccessKey: stored.secretAccessKey, kept: true };
}
