import { randomUUID } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { BackupRun, OwnBackupTarget, WorkerBackupTargetsStore } from '@hostctl/db';
import {
  BACKUP_TARGET_ALLOWLIST,
  checkBackupEndpoint,
  resolveAndCheckHost,
  type GitUrlOptions,
  type Lookup,
} from '@hostctl/source-policy';
import { PermanentStepError } from '../pipeline/step-errors.js';
import type { BackupTarget, RepositoryKeys } from './repository.js';
import { createS3Target } from './s3-target.js';

/** Where one run reads or writes: `target` null is the engine's own, the operator's default. */
export interface ChosenTarget {
  kind: string;
  /** `<endpoint>/<bucket>/<prefix>` of a customer's own bucket; null for the operator's target. */
  location: string | null;
  target: BackupTarget | null;
}

/**
 * Which target a run uses (docs/backups.md#a-customers-own-target): a new backup goes to the
 * customer's own bucket when one is set, else to the operator's default (BACKUP_TARGET); a restore
 * or check reads from the target its backup recorded, and refuses, saying why, when that target
 * is not the one this worker or the customer has now.
 */
export interface BackupTargets {
  /** The operator's default (`local`, `s3`), recorded on a run that failed before choosing. */
  operatorKind: string;
  forBackup(customerId: string): Promise<ChosenTarget>;
  ofBackup(backup: Pick<BackupRun, 'customerId' | 'target' | 'targetLocation'>): Promise<ChosenTarget>;
}

/** The operator's target alone (the engine's own): what a worker without the customer store has. */
export function operatorTargets(kind: string): BackupTargets {
  return {
    operatorKind: kind,
    forBackup: async () => ({ kind, location: null, target: null }),
    async ofBackup(backup) {
      if (backup.target !== kind)
        throw new PermanentStepError(
          `the backup is on the ${backup.target} target and this worker opens the ${kind} target (BACKUP_TARGET)`,
        );
      return { kind, location: null, target: null };
    },
  };
}

const locationOf = (target: Pick<OwnBackupTarget, 'endpoint' | 'bucket' | 'prefix'>) =>
  [target.endpoint, target.bucket, target.prefix].filter(Boolean).join('/');

interface CustomerTargetDeps {
  store: WorkerBackupTargetsStore;
  /** BACKUP_KEY (repository passwords, as for the operator's targets) and BACKUP_RELAY_DIR. */
  settings: { BACKUP_KEY: string; BACKUP_RELAY_DIR: string };
  /** BACKUP_TARGET_ALLOWED_HOSTS and the control plane's endpoints. */
  policy: GitUrlOptions;
  keys?: RepositoryKeys;
  lookup?: Lookup;
}

/** The operator's default, and each customer's own bucket while it has one. */
export function createBackupTargets(operatorKind: string, deps: CustomerTargetDeps): BackupTargets {
  const operator = operatorTargets(operatorKind);
  return {
    operatorKind,
    async forBackup(customerId) {
      const own = await deps.store.forCustomer(customerId);
      if (!own) return operator.forBackup(customerId);
      return { kind: 'customer', location: locationOf(own), target: customerTarget(own, deps) };
    },
    async ofBackup(backup) {
      if (backup.target !== 'customer') return operator.ofBackup(backup);
      const own = await deps.store.forCustomer(backup.customerId);
      const was = backup.targetLocation ?? 'unknown';
      if (!own)
        throw new PermanentStepError(
          `the backup is in the customer's own bucket ${was}, and the customer has no backup target any more: set it again to restore`,
        );
      if (locationOf(own) !== backup.targetLocation)
        throw new PermanentStepError(
          `the backup is in the customer's own bucket ${was}, but the customer's backup target changed since to ${locationOf(own)}: set it back to restore`,
        );
      return { kind: 'customer', location: locationOf(own), target: customerTarget(own, deps) };
    },
  };
}

/**
 * The customer's bucket through the S3 target's code (relay, no network, restic's own S3
 * backend). The endpoint is checked again here (the allowlist may have changed since it was
 * saved) and resolved once: the relay dials the address that passed, so a name rebound to an
 * internal address between check and connect is not followed.
 */
function customerTarget(own: OwnBackupTarget, deps: CustomerTargetDeps): BackupTarget {
  return {
    kind: 'customer',
    async open(customerId) {
      const verdict = checkBackupEndpoint(own.endpoint, deps.policy);
      if (!verdict.ok)
        throw new PermanentStepError(`the customer's backup endpoint is refused: ${verdict.reason}`);
      const resolved = await resolveAndCheckHost(verdict.endpoint.host, verdict.endpoint.isAllowlisted, {
        allowlistName: BACKUP_TARGET_ALLOWLIST,
        ...(deps.lookup ? { lookup: deps.lookup } : {}),
      });
      if (!resolved.ok) throw new Error(`the customer's backup endpoint is refused: ${resolved.reason}`);
      const relayDir = deps.settings.BACKUP_RELAY_DIR || path.join(os.tmpdir(), 'hostctl-backup-relay');
      // The relay directory is the worker's own (mode 0700, checked by the relay): the CA file
      // beside the sockets is bind-mounted read-only into the one container, then removed.
      const caFile = own.caPem === null ? '' : path.join(relayDir, `${randomUUID()}.ca.pem`);
      const target = createS3Target(
        {
          BACKUP_KEY: deps.settings.BACKUP_KEY,
          BACKUP_S3_ENDPOINT: own.endpoint,
          BACKUP_S3_BUCKET: own.bucket,
          BACKUP_S3_PREFIX: own.prefix,
          BACKUP_S3_REGION: own.region,
          BACKUP_S3_ACCESS_KEY_ID: own.accessKeyId,
          BACKUP_S3_SECRET_ACCESS_KEY: own.secretAccessKey,
          BACKUP_S3_CA_FILE: caFile,
          BACKUP_RELAY_DIR: relayDir,
        },
        deps.keys,
        { host: resolved.resolved.addresses[0] ?? verdict.endpoint.host },
      );
      const access = await target.open(customerId);
      if (own.caPem === null) return access;
      try {
        await writeFile(caFile, own.caPem, { mode: 0o644, flag: 'wx' });
      } catch (error) {
        await access.close();
        throw error;
      }
      return {
        ...access,
        close: async () => {
          await access.close();
          await rm(caFile, { force: true });
        },
      };
    },
  };
}
