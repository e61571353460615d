import { Type, type Static } from 'typebox';
import { Id, Timestamp } from '../../http/schemas.js';

/**
 * A customer's own backup bucket (docs/backups.md#a-customers-own-target). The bodies carry the
 * credentials; no answer ever does: it says only that they are set. Each field is defined once and
 * shared by PUT (the whole target) and PATCH (the fields given), so their bounds cannot drift.
 */
const Endpoint = Type.String({
  minLength: 1,
  maxLength: 300,
  description: 'https://host[:port]: a scheme, a host and a port only; the backup container reaches only it',
});
const Bucket = Type.String({ minLength: 1, maxLength: 63, description: 'The bucket; it must exist' });
const Prefix = Type.String({
  maxLength: 200,
  description: 'Key prefix (default hostctl): the repository is <prefix>/<customer id>',
});
const Region = Type.String({ minLength: 1, maxLength: 40, description: 'Default us-east-1' });
const AccessKeyId = Type.String({
  minLength: 1,
  maxLength: 256,
  description: 'Write-only; left out with secret_access_key: the stored credentials are kept',
});
const SecretAccessKey = Type.String({
  minLength: 1,
  maxLength: 512,
  description:
    'Write-only; may be left out only while the endpoint, bucket and access key id stay as stored (the stored credentials are kept)',
});
const CaCertificate = Type.String({
  minLength: 1,
  maxLength: 65536,
  description: 'PEM certificates to trust instead of the public CA bundle',
});

export const BackupTargetBody = Type.Object(
  {
    endpoint: Endpoint,
    bucket: Bucket,
    prefix: Type.Optional(Prefix),
    region: Type.Optional(Region),
    access_key_id: Type.Optional(AccessKeyId),
    secret_access_key: Type.Optional(SecretAccessKey),
    ca_certificate: Type.Optional(Type.Union([CaCertificate, Type.Null()])),
  },
  { additionalProperties: false },
);
export type BackupTargetBody = Static<typeof BackupTargetBody>;

/**
 * PATCH: a JSON merge onto the stored target. A field left out stays as stored; `null` sets an
 * optional field back to its default (prefix hostctl, region us-east-1, no CA).
 */
export const BackupTargetPatch = Type.Object(
  {
    endpoint: Type.Optional(Endpoint),
    bucket: Type.Optional(Bucket),
    prefix: Type.Optional(Type.Union([Prefix, Type.Null()])),
    region: Type.Optional(Type.Union([Region, Type.Null()])),
    access_key_id: Type.Optional(AccessKeyId),
    secret_access_key: Type.Optional(SecretAccessKey),
    ca_certificate: Type.Optional(Type.Union([CaCertificate, Type.Null()])),
  },
  { additionalProperties: false },
);
export type BackupTargetPatch = Static<typeof BackupTargetPatch>;

export const BackupTarget = Type.Object({
  customer_id: Id,
  endpoint: Type.String(),
  bucket: Type.String(),
  prefix: Type.String(),
  region: Type.String(),
  has_ca_certificate: Type.Boolean(),
  /** Always true for a stored target: the credentials are required and never shown. */
  has_credentials: Type.Boolean(),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type BackupTarget = Static<typeof BackupTarget>;
