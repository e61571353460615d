import type { Backup, BackupSchedule } from '@hostctl/api-client';
import { timeAgo } from '../format.ts';

// The Backups tab's words (docs/backups.md): every state is said, never left to a colour or a
// blank cell. Pure, so the unit tests need no browser; `now` is a parameter for the same reason.

type Restore = NonNullable<Backup['last_restore']>;

/** A run the worker has not finished: its row, and so the list, is read again every 2 s. */
export function isActive(backup: Backup): boolean {
  return (
    backup.status === 'queued' ||
    backup.status === 'running' ||
    backup.verify_status === 'queued' ||
    backup.verify_status === 'running' ||
    isRestoring(backup.last_restore)
  );
}

export function isRestoring(restore: Restore | null | undefined): boolean {
  return restore?.status === 'queued' || restore?.status === 'running';
}

/** Only a succeeded backup can be verified, restored or cloned (the API answers 409 otherwise). */
export const restorable = (backup: Backup) => backup.status === 'succeeded';

/** The backup's state in words, with the reason when it did not succeed. */
export function backupState(backup: Backup): string {
  switch (backup.status) {
    case 'queued':
      return 'Queued: waiting for a worker';
    case 'running':
      return 'Running';
    case 'succeeded':
      return 'Succeeded';
    case 'failed':
      return `Failed: ${backup.error ?? 'no reason recorded'}`;
    case 'expired':
      return 'Expired: the retention policy removed its snapshots; it cannot be restored';
    case 'missed':
      return `Missed: ${backup.error ?? 'no worker took the scheduled time'}`;
  }
}

/** The last repository check of the backup, in words. */
export function verifyState(backup: Backup, now = Date.now()): string {
  switch (backup.verify_status) {
    case null:
      return 'Not verified';
    case 'queued':
      return 'Check queued';
    case 'running':
      return 'Checking';
    case 'passed':
      return `Passed ${timeAgo(backup.verified_at, now)}`;
    case 'failed':
      return `Failed: ${backup.verify_error ?? 'no reason recorded'}`;
  }
}

/** The newest restore of the backup; `ownService` tells a restore in place from a clone. */
export function restoreState(restore: Restore, ownService: string, now = Date.now()): string {
  const where = restore.service_id === ownService ? '' : ' into a new service';
  switch (restore.status) {
    case 'queued':
      return `Restore${where} queued`;
    case 'running':
      return `Restoring${where}`;
    case 'succeeded':
      return `Restored${where} ${timeAgo(restore.finished_at, now)}`;
    case 'failed':
      return `Restore${where} failed: ${restore.error ?? 'no reason recorded'}`;
  }
}

const UNITS = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];

/** 1536 → "1.5 KiB"; null (not finished) → "—". */
export function size(bytes: number | null): string {
  if (bytes === null) return '—';
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${value} bytes` : `${value.toFixed(value < 10 ? 1 : 0)} ${UNITS[unit]}`;
}

/** 83_400 → "1 min 23 s"; null → "—". */
export function duration(ms: number | null): string {
  if (ms === null) return '—';
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return seconds === 0 && ms > 0 ? 'under 1 s' : `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  const rest = seconds % 60;
  return rest === 0 ? `${minutes} min` : `${minutes} min ${rest} s`;
}

/** The names of the volumes, for the restore's question ("data and uploads"). */
export function volumeNames(backup: Backup): string {
  const names = backup.volumes.map((volume) => volume.name);
  if (names.length <= 1) return names.join('');
  return `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
}

const RULES: [keyof BackupSchedule['retention'], string][] = [
  ['keep_last', 'last'],
  ['keep_daily', 'daily'],
  ['keep_weekly', 'weekly'],
  ['keep_monthly', 'monthly'],
];

/** "keep the last 3 and 14 daily; weekly and monthly from the labels or the operator's defaults". */
export function retentionText(retention: BackupSchedule['retention']): string {
  const set = RULES.filter(([key]) => retention[key] !== null).map(([key, word]) =>
    key === 'keep_last' ? `the last ${retention[key]}` : `${retention[key]} ${word}`,
  );
  const unset = RULES.filter(([key]) => retention[key] === null).map(([, word]) => word);
  const kept = set.length > 0 ? `Keeps ${set.join(', ')}` : 'Nothing set here';
  return unset.length > 0
    ? `${kept}; ${unset.join(', ')} from the compose labels or the operator's defaults.`
    : `${kept}.`;
}
