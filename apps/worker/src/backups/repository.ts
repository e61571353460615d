import { createHmac } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { PermanentStepError } from '../pipeline/step-errors.js';
import type { EngineMount } from '../adapters/backup-containers.js';
import { REPOSITORY_MOUNT } from './restic.js';

/**
 * Where a customer's restic repository is and how it is opened (docs/backups.md). Each customer has
 * a repository of its own with a password of its own, so one customer's backups can never be read
 * with another's key, even by a bug in our scoping.
 */
export interface RepositoryKeys {
  /** The repository password of one customer; never logged, never in a job or an API answer. */
  passwordFor(customerId: string): string;
}

/**
 * Passwords derived from the operator's BACKUP_KEY: nothing to store, nothing to leak from the
 * database, and the key alone (kept off the machine) reopens every repository. A secrets module
 * that stores per-customer keys can implement RepositoryKeys instead.
 */
export function createDerivedRepositoryKeys(operatorKey: string): RepositoryKeys {
  return {
    passwordFor: (customerId) =>
      createHmac('sha256', operatorKey)
        .update(`hostctl restic repository v1:${customerId}`)
        .digest('base64url'),
  };
}

/**
 * What one engine container needs to open a customer's repository: its environment (repository,
 * password, credentials: never log it), its mounts, and for a target across the network the way
 * out (a relay socket, see s3-target.ts). `close` ends whatever `open` started.
 */
export interface RepositoryAccess {
  env: string[];
  mounts: EngineMount[];
  /** The command to run instead of `cmd` (the S3 target starts its relay end first). */
  command(cmd: string[]): string[];
  /** Capabilities beyond the engine's file ones (binding a relay port below 1024). */
  capAdd: string[];
  /** Secret values to keep out of every reason and log line. */
  secrets: string[];
  close(): Promise<void>;
}

export interface BackupTarget {
  /**
   * `local`, `s3` (the operator's) or `customer` (the customer's own bucket): recorded on each
   * backup, which is restored from that target only.
   */
  kind: 'local' | 's3' | 'customer';
  open(customerId: string): Promise<RepositoryAccess>;
}

const CUSTOMER_ID = /^[0-9a-f-]{36}$/;

export function checkCustomerId(customerId: string): string {
  if (!CUSTOMER_ID.test(customerId)) throw new PermanentStepError('the backup names no valid customer');
  return customerId;
}

interface TargetSettings {
  BACKUP_LOCAL_PATH: string;
  BACKUP_KEY: string;
}

export function requireBackupKey(key: string, keys?: RepositoryKeys): RepositoryKeys {
  if (key === '' && !keys)
    throw new PermanentStepError('backups are not configured on this worker: BACKUP_KEY is needed');
  return keys ?? createDerivedRepositoryKeys(key);
}

/**
 * The local target: `<BACKUP_LOCAL_PATH>/<customer id>` on the engine's host. The only host path a
 * backup container ever sees. Missing settings fail the run with a reason, never silently.
 */
export function createLocalTarget(settings: TargetSettings, keys?: RepositoryKeys): BackupTarget {
  return {
    kind: 'local',
    async open(customerId) {
      if (!path.isAbsolute(settings.BACKUP_LOCAL_PATH) || settings.BACKUP_KEY === '')
        throw new PermanentStepError(
          'backups are not configured on this worker: BACKUP_LOCAL_PATH (absolute) and BACKUP_KEY are needed',
        );
      const password = requireBackupKey(settings.BACKUP_KEY, keys).passwordFor(checkCustomerId(customerId));
      const source = path.join(settings.BACKUP_LOCAL_PATH, customerId);
      // Only the owner reads a repository directory: its files are encrypted, their names are not.
      await mkdir(source, { recursive: true, mode: 0o700 });
      return {
        env: [`RESTIC_REPOSITORY=${REPOSITORY_MOUNT}`, `RESTIC_PASSWORD=${password}`],
        mounts: [{ type: 'bind', source, target: REPOSITORY_MOUNT, readOnly: false }],
        command: (cmd) => cmd,
        capAdd: [],
        secrets: [password],
        close: async () => undefined,
      };
    },
  };
}
