/**
 * The restic command lines of a backup or restore and the reading of their output (docs/backups.md).
 * Argument arrays only: ids are UUIDs or restic's hex snapshot ids, checked before they get here,
 * and nothing a tenant wrote reaches a command line.
 */

/** Where the repository and the volume are mounted in the engine's container. */
export const REPOSITORY_MOUNT = '/repo';
export const VOLUME_MOUNT = '/data';

const SNAPSHOT_ID = /^[0-9a-f]{8,64}$/;

export const initCommand = (): string[] => ['restic', 'init', '--no-cache'];

/** restic refuses to init twice; that answer means the repository is there, which is what we want. */
export const isAlreadyInitialised = (stderr: string): boolean => /config file already exists/.test(stderr);

export function backupCommand(tags: { backupId: string; serviceId: string; volume: string }): string[] {
  return [
    'restic',
    'backup',
    '--no-cache',
    '--json',
    '--host',
    'hostctl',
    '--tag',
    `backup:${tags.backupId}`,
    '--tag',
    `service:${tags.serviceId}`,
    '--tag',
    `volume:${tags.volume}`,
    VOLUME_MOUNT,
  ];
}

/** The snapshot is restored at its own path (/data), where the target volume is mounted. */
export function restoreCommand(snapshotId: string): string[] {
  if (!SNAPSHOT_ID.test(snapshotId)) throw new Error(`not a restic snapshot id: ${snapshotId}`);
  return ['restic', 'restore', '--no-cache', '--verify', '--target', '/', snapshotId];
}

/** How many snapshots of one service volume survive `restic forget` (docs/backups.md#retention). */
export interface RetentionPolicy {
  last: number;
  daily: number;
  weekly: number;
  monthly: number;
}

/**
 * Forgets the snapshots of one volume of one service that the policy does not keep. The tags
 * narrow it to that service and volume (a comma in one `--tag` means both), and grouping by host
 * (always `hostctl`) makes the group exactly those snapshots: never another service's.
 */
export function forgetCommand(
  scope: { serviceId: string; volume: string },
  policy: RetentionPolicy,
): string[] {
  const keep = (flag: string, count: number) => (count > 0 ? [`--keep-${flag}`, String(count)] : []);
  return [
    'restic',
    'forget',
    '--no-cache',
    '--group-by',
    'host',
    '--tag',
    `service:${scope.serviceId},volume:${scope.volume}`,
    ...keep('last', Math.max(1, policy.last)),
    ...keep('daily', policy.daily),
    ...keep('weekly', policy.weekly),
    ...keep('monthly', policy.monthly),
  ];
}

export const pruneCommand = (): string[] => ['restic', 'prune', '--no-cache'];

export const serviceSnapshotsCommand = (serviceId: string): string[] => [
  'restic',
  'snapshots',
  '--no-cache',
  '--json',
  '--tag',
  `service:${serviceId}`,
];

/** The ids (full and short) of the snapshots `restic snapshots --json` lists; null if unreadable. */
export function parseSnapshotIds(stdout: string): Set<string> | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(
      stdout
        .trim()
        .split('\n')
        .find((line) => line.startsWith('[')) ?? '',
    );
  } catch {
    return null;
  }
  if (!Array.isArray(parsed)) return null;
  const ids = new Set<string>();
  for (const item of parsed as { id?: unknown; short_id?: unknown }[]) {
    if (typeof item.id === 'string') ids.add(item.id);
    if (typeof item.short_id === 'string') ids.add(item.short_id);
  }
  return ids;
}

export interface BackupSummary {
  snapshotId: string;
  bytes: number;
  files: number;
}

/**
 * The summary line of `restic backup --json`. Without one, restic did not finish a snapshot (it
 * writes the snapshot last, so an interrupted run leaves none behind): the backup failed.
 */
export function parseBackupSummary(stdout: string): BackupSummary | null {
  for (const line of stdout.split('\n').reverse()) {
    if (!line.startsWith('{')) continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      continue;
    }
    const summary = parsed as {
      message_type?: string;
      snapshot_id?: unknown;
      total_bytes_processed?: unknown;
      total_files_processed?: unknown;
    };
    if (summary.message_type !== 'summary') continue;
    if (typeof summary.snapshot_id !== 'string' || !SNAPSHOT_ID.test(summary.snapshot_id)) return null;
    return {
      snapshotId: summary.snapshot_id,
      bytes: typeof summary.total_bytes_processed === 'number' ? summary.total_bytes_processed : 0,
      files: typeof summary.total_files_processed === 'number' ? summary.total_files_processed : 0,
    };
  }
  return null;
}

/** The last lines of restic's error output, for a run's reason (it never prints the password). */
export function engineReason(stderr: string, stdout = ''): string {
  const text = (stderr.trim() || stdout.trim()).split('\n').slice(-3).join(' | ');
  return text.slice(0, 500) || 'no output';
}
