import { Type, type Static } from 'typebox';
import { Id, Timestamp } from '../../http/schemas.js';

/**
 * A customer's own backup bucket (docs/backups.md#a-customers-own-target). The body carries the
 * credentials; no answer ever does: it says only that they are set.
 */
export const BackupTargetBody = Type.Object(
  {
    endpoint: Type.String({
      minLength: 1,
      maxLength: 300,
      description:
        'https://host[:port]: a scheme, a host and a port only; the backup container reaches only it',
    }),
    bucket: Type.String({ minLength: 1, maxLength: 63, description: 'The bucket; it must exist' }),
    prefix: Type.Optional(
      Type.String({
        maxLength: 200,
        description: 'Key prefix (default hostctl): the repository is <prefix>/<customer id>',
      }),
    ),
    region: Type.Optional(Type.String({ minLength: 1, maxLength: 40, description: 'Default us-east-1' })),
    access_key_id: Type.String({ minLength: 1, maxLength: 256, description: 'Write-only' }),
    secret_access_key: Type.String({ minLength: 1, maxLength: 512, description: 'Write-only' }),
    ca_certificate: Type.Optional(
      Type.Union([
        Type.String({
          minLength: 1,
          maxLength: 65536,
          description: 'PEM certificates to trust instead of the public CA bundle',
        }),
        Type.Null(),
      ]),
    ),
  },
  { additionalProperties: false },
);
export type BackupTargetBody = Static<typeof BackupTargetBody>;

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
