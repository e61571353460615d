import { Type } from 'typebox';
import { describe } from './describe.js';

/** Where the worker keeps customers' restic repositories and how it opens them (docs/backups.md). */
export const backupSettings = {
  BACKUP_LOCAL_PATH: describe(
    Type.String({ default: '' }),
    'Absolute host directory of the local backup target: one restic repository per customer under it (docs/backups.md). Empty: backups fail with a reason.',
  ),
  BACKUP_KEY: describe(
    Type.String({ default: '' }),
    "Operator key the customers' restic repository passwords are derived from (HMAC per customer); keep a copy off this machine, without it no backup can be read. Empty: backups fail with a reason.",
  ),
  BACKUP_IMAGE: describe(
    Type.String({ default: 'local/hostctl-restic:1' }),
    'Image the short-lived backup and restore containers run (restic and busybox; scripts/lib/docker.sh builds it).',
  ),
};
