import type { Plan } from '@hostctl/compose';
import type { RetentionOverrides, WorkerBackupsStore } from '@hostctl/db';
import { PermanentStepError } from '../pipeline/step-errors.js';
import {
  engineReason,
  forgetCommand,
  parseSnapshotIds,
  pruneCommand,
  serviceSnapshotsCommand,
} from './restic.js';
import type { RetentionPolicy } from './restic.js';
import type { VolumeEngine } from './volume-engine.js';

/** Compose labels a component overrides the operator's retention defaults with (docs/backups.md). */
const KEEP_LABELS = {
  last: 'hostctl.backup.keep-last',
  daily: 'hostctl.backup.keep-daily',
  weekly: 'hostctl.backup.keep-weekly',
  monthly: 'hostctl.backup.keep-monthly',
} as const;

export interface RetentionDefaults {
  BACKUP_KEEP_LAST: number;
  BACKUP_KEEP_DAILY: number;
  BACKUP_KEEP_WEEKLY: number;
  BACKUP_KEEP_MONTHLY: number;
}

/**
 * The service's policy, one precedence per rule (docs/backups.md#retention): what its backup
 * schedule sets through the API, else a component's label, else the operator's default. Two
 * components that declare different values are refused (which one would win is not obvious), and
 * `keep-last` is at least 1, so the backup just taken is always kept.
 */
export function retentionOf(
  plan: Plan,
  defaults: RetentionDefaults,
  overrides: RetentionOverrides | null = null,
): RetentionPolicy {
  const labelled = labelledRetention(plan, defaults);
  return {
    last: overrides?.keepLast ?? labelled.last,
    daily: overrides?.keepDaily ?? labelled.daily,
    weekly: overrides?.keepWeekly ?? labelled.weekly,
    monthly: overrides?.keepMonthly ?? labelled.monthly,
  };
}

function labelledRetention(plan: Plan, defaults: RetentionDefaults): RetentionPolicy {
  const policy: RetentionPolicy = {
    last: defaults.BACKUP_KEEP_LAST,
    daily: defaults.BACKUP_KEEP_DAILY,
    weekly: defaults.BACKUP_KEEP_WEEKLY,
    monthly: defaults.BACKUP_KEEP_MONTHLY,
  };
  const declaredBy: Partial<Record<keyof RetentionPolicy, string>> = {};
  for (const container of plan.containers)
    for (const [field, label] of Object.entries(KEEP_LABELS) as [keyof RetentionPolicy, string][]) {
      const raw = container.labels[label];
      if (raw === undefined) continue;
      const where = `services.${container.name}.labels.${label}`;
      const minimum = field === 'last' ? 1 : 0;
      if (!/^\d{1,4}$/.test(raw) || Number(raw) < minimum)
        throw new PermanentStepError(
          `${where} must be a whole number from ${minimum} to 9999, not ${JSON.stringify(raw)}`,
        );
      const earlier = declaredBy[field];
      if (earlier !== undefined && Number(raw) !== policy[field])
        throw new PermanentStepError(`${where} (${raw}) disagrees with ${earlier} (${policy[field]})`);
      policy[field] = Number(raw);
      declaredBy[field] = where;
    }
  return policy;
}

const describePolicy = (policy: RetentionPolicy): string =>
  `keep last ${policy.last}, daily ${policy.daily}, weekly ${policy.weekly}, monthly ${policy.monthly}`;

/**
 * After a successful backup: `restic forget` per volume of the service (only its own snapshots),
 * one `restic prune`, then every earlier backup of the service in this repository whose snapshots
 * are gone is marked `expired` (no longer restorable). Runs under the service's lock, in the same
 * sandboxed engine containers as the backup.
 */
export async function applyRetention(
  deps: {
    engine: Pick<VolumeEngine, 'restic'>;
    store: Pick<WorkerBackupsStore, 'expireBackups'>;
    target: string;
    /** The customer's bucket (`customer` target): only backups taken into it are expired. */
    targetLocation?: string | null;
  },
  run: { id: string; customerId: string; serviceId: string; volumes: string[]; policy: RetentionPolicy },
  log: (line: string) => Promise<void>,
): Promise<string[]> {
  const restic = async (cmd: string[], what: string) => {
    const result = await deps.engine.restic(run.id, run.customerId, cmd, []);
    if (result.exitCode !== 0)
      throw new Error(
        `${what} failed (exit ${result.exitCode}): ${engineReason(result.stderr, result.stdout)}`,
      );
    return result;
  };
  for (const volume of run.volumes)
    await restic(
      forgetCommand({ serviceId: run.serviceId, volume }, run.policy),
      `restic forget of ${volume}`,
    );
  await restic(pruneCommand(), 'restic prune');
  const listed = await restic(serviceSnapshotsCommand(run.serviceId), 'restic snapshots');
  const kept = parseSnapshotIds(listed.stdout);
  if (!kept) throw new Error('restic snapshots gave no list: no backup is marked expired');
  const expired = await deps.store.expireBackups({
    serviceId: run.serviceId,
    customerId: run.customerId,
    target: deps.target,
    targetLocation: deps.targetLocation ?? null,
    keptSnapshots: kept,
    reason: `its snapshots were removed by the retention policy (${describePolicy(run.policy)}) after backup ${run.id}`,
  });
  await log(
    `retention (${describePolicy(run.policy)}): ${expired.length === 0 ? 'no backup' : expired.join(', ')} expired`,
  );
  return expired;
}
