import { Type } from 'typebox';
import { describe } from './describe.js';

/** Where the worker keeps customers' restic repositories and how it opens them (docs/backups.md). */
export const backupSettings = {
  BACKUP_TARGET: describe(
    Type.Union([Type.Literal('local'), Type.Literal('s3')], { default: 'local' }),
    'Where new backups go: `local` (BACKUP_LOCAL_PATH) or `s3` (an S3-compatible bucket, BACKUP_S3_*). A backup is restored from the target it was taken to (docs/backups.md).',
  ),
  BACKUP_LOCAL_PATH: describe(
    Type.String({ default: '' }),
    'Absolute host directory of the local backup target: one restic repository per customer under it (docs/backups.md). Empty: backups fail with a reason.',
  ),
  BACKUP_KEY: describe(
    Type.String({ default: '' }),
    "Operator key the customers' restic repository passwords are derived from (HMAC per customer); keep a copy off this machine, without it no backup can be read. Empty: backups fail with a reason.",
  ),
  BACKUP_IMAGE: describe(
    Type.String({ default: 'local/hostctl-restic:2' }),
    'Image the short-lived backup and restore containers run (restic, socat and busybox; scripts/lib/docker.sh builds it).',
  ),
  BACKUP_S3_ENDPOINT: describe(
    Type.String({ default: '' }),
    'S3 target: the endpoint URL, `https://host[:port]` (or `http://` for a server on loopback). The backup containers reach this host and port only, through a relay of the worker (docs/backups.md).',
  ),
  BACKUP_S3_BUCKET: describe(Type.String({ default: '' }), 'S3 target: the bucket (it must exist).'),
  BACKUP_S3_PREFIX: describe(
    Type.String({ default: 'hostctl' }),
    "S3 target: key prefix; each customer's repository is `<prefix>/<customer id>` in the bucket.",
  ),
  BACKUP_S3_REGION: describe(Type.String({ default: 'us-east-1' }), 'S3 target: the region.'),
  BACKUP_S3_ACCESS_KEY_ID: describe(
    Type.String({ default: '' }),
    'S3 target: access key id (or BACKUP_S3_ACCESS_KEY_ID_FILE).',
  ),
  BACKUP_S3_SECRET_ACCESS_KEY: describe(
    Type.String({ default: '' }),
    'S3 target: secret access key (or BACKUP_S3_SECRET_ACCESS_KEY_FILE); given only to the backup containers, never logged or stored.',
  ),
  BACKUP_S3_CA_FILE: describe(
    Type.String({ default: '' }),
    "S3 target: absolute path of a PEM file of the certificates restic trusts for an https endpoint with a private CA (instead of Debian's CA bundle in the image).",
  ),
  BACKUP_RELAY_DIR: describe(
    Type.String({ default: '' }),
    "Absolute directory for the S3 relay's Unix sockets, the same path on the worker and the engine's host (empty: `<tmpdir>/hostctl-backup-relay`).",
  ),
  BACKUP_KEEP_LAST: describe(
    Type.Integer({ default: 7, minimum: 1 }),
    'Retention default: the newest N snapshots of each service volume are kept (label `hostctl.backup.keep-last` overrides it per service). Applied after every successful backup (docs/backups.md).',
  ),
  BACKUP_KEEP_DAILY: describe(
    Type.Integer({ default: 14, minimum: 0 }),
    'Retention default: one snapshot per day for the last D days with one (label `hostctl.backup.keep-daily`).',
  ),
  BACKUP_KEEP_WEEKLY: describe(
    Type.Integer({ default: 8, minimum: 0 }),
    'Retention default: one snapshot per week for the last W weeks (label `hostctl.backup.keep-weekly`).',
  ),
  BACKUP_KEEP_MONTHLY: describe(
    Type.Integer({ default: 12, minimum: 0 }),
    'Retention default: one snapshot per month for the last M months (label `hostctl.backup.keep-monthly`).',
  ),
};
