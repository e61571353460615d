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

export interface BackupTarget {
  /** The mount of the customer's repository in the engine's container. */
  repositoryMount(customerId: string): Promise<EngineMount>;
  password(customerId: string): string;
}

const CUSTOMER_ID = /^[0-9a-f-]{36}$/;

interface TargetSettings {
  BACKUP_LOCAL_PATH: string;
  BACKUP_KEY: string;
}

/**
 * The local target: `<BACKUP_LOCAL_PATH>/<customer id>` on the engine's host. The only host path a
 * backup container ever sees. Missing settings fail the run with a reason, never silently.
 */
export function createLocalTarget(settings: TargetSettings, keys?: RepositoryKeys): BackupTarget {
  const configured = (): { root: string; keys: RepositoryKeys } => {
    if (!path.isAbsolute(settings.BACKUP_LOCAL_PATH) || settings.BACKUP_KEY === '')
      throw new PermanentStepError(
        'backups are not configured on this worker: BACKUP_LOCAL_PATH (absolute) and BACKUP_KEY are needed',
      );
    return {
      root: settings.BACKUP_LOCAL_PATH,
      keys: keys ?? createDerivedRepositoryKeys(settings.BACKUP_KEY),
    };
  };
  return {
    async repositoryMount(customerId) {
      if (!CUSTOMER_ID.test(customerId)) throw new PermanentStepError('the backup names no valid customer');
      const source = path.join(configured().root, customerId);
      // Only the owner reads a repository directory: its files are encrypted, their names are not.
      await mkdir(source, { recursive: true, mode: 0o700 });
      return { type: 'bind', source, target: REPOSITORY_MOUNT, readOnly: false };
    },
    password: (customerId) => configured().keys.passwordFor(customerId),
  };
}
