import { customerScope, type Principal } from '@hostctl/auth-policy';
import {
  isUniqueViolation,
  type BackupCloneStore,
  type BackupRun,
  type CapacityClaim,
  type NewService,
  type ServicesStore,
  type VariableGroupsStore,
} from '@hostctl/db';
import { DomainError } from '@hostctl/domain';
import type { CreateServiceBody } from '../services/services.schemas.js';
import type { BackupsStore } from '@hostctl/db';

/** Refuses a backup that cannot be restored (into its service or a new one), saying why. */
export function checkRestorable(backup: BackupRun): void {
  if (backup.status === 'expired')
    throw new DomainError(
      'conflict',
      `backup ${backup.id} is expired and cannot be restored: ${backup.error ?? 'the retention policy removed its snapshots'}`,
    );
  if (backup.status !== 'succeeded')
    throw new DomainError(
      'conflict',
      `backup ${backup.id} is ${backup.status}: only a succeeded backup can be restored`,
    );
}

type SourceService = NonNullable<Awaited<ReturnType<ServicesStore['findById']>>>;

const asStrings = (value: unknown): Record<string, string> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, string>)
    : {};

interface BackupCloneDeps {
  backups: Pick<BackupsStore, 'findBackup'>;
  services: Pick<ServicesStore, 'findById'>;
  groups: Pick<VariableGroupsStore, 'groupIdsOf'>;
  clones: Pick<BackupCloneStore, 'releaseSource' | 'createClone' | 'failUnqueuedClone'>;
  /** The services module's create check (services.service.ts): the same refusals as a create. */
  prepareCreate: (
    principal: Principal,
    body: CreateServiceBody,
  ) => Promise<{ input: NewService; capacity: CapacityClaim }>;
  enqueueRestore: (restoreId: string) => Promise<void>;
}

/**
 * The create request a clone stands for: the source service's definition as the backup's release
 * ran it (its compose, variables with their secret marks, variable groups), for the source's own
 * customer. Parts the release did not record (older rows, a backup without a release) are the
 * service's current ones. Custom domains are not copied: they stay the source's.
 */
async function cloneRequest(
  deps: BackupCloneDeps,
  backup: BackupRun,
  source: SourceService,
  name: string,
): Promise<CreateServiceBody> {
  const release = backup.deploymentId
    ? await deps.clones.releaseSource(source.id, backup.deploymentId)
    : null;
  const variables = release?.variables ?? asStrings(source.variables);
  const secretNames = release?.variables
    ? (release.secretNames ?? asStrings(source.secretNames))
    : asStrings(source.secretNames);
  const plain = Object.fromEntries(Object.entries(variables).filter(([key]) => !(key in secretNames)));
  const secret = Object.fromEntries(Object.entries(variables).filter(([key]) => key in secretNames));
  const groups = release?.groupIds ?? (await deps.groups.groupIdsOf(source.id));
  const method = source.deployMethod;
  return {
    name,
    customer_id: source.customerId,
    deploy_method: method,
    ...(method === 'compose' ? { compose: release?.compose ?? source.compose } : {}),
    ...(method === 'template' && source.templateId ? { template_id: source.templateId } : {}),
    ...(method === 'git' && source.gitUrl ? { git_url: source.gitUrl } : {}),
    ...(method === 'git' && source.gitBranch ? { git_branch: source.gitBranch } : {}),
    ...(method === 'ai' && source.aiUrl ? { ai_url: source.aiUrl } : {}),
    variables: plain,
    ...(Object.keys(secret).length > 0 ? { secret_variables: secret } : {}),
    ...(groups.length > 0 ? { variable_groups: groups } : {}),
  };
}

/**
 * Restores a succeeded backup into a new service of the same customer (docs/backups.md#restore-into-a-new-service):
 * checked and counted as a create, stored without its first deployment, which the worker queues
 * once the new service's volumes hold the snapshot's data.
 */
export function createBackupClone(deps: BackupCloneDeps) {
  return async (principal: Principal, backupId: string, name: string) => {
    const backup = await deps.backups.findBackup(customerScope(principal), backupId);
    if (!backup) throw new DomainError('not_found', `backup ${backupId} not found`);
    const source = await deps.services.findById(customerScope(principal), backup.serviceId);
    // The repository is the customer's: a service moved to another customer (never today) or a
    // deleted one is as unknown as the backup.
    if (!source || source.customerId !== backup.customerId)
      throw new DomainError('not_found', `backup ${backupId} not found`);
    checkRestorable(backup);
    const { input, capacity } = await deps.prepareCreate(
      principal,
      await cloneRequest(deps, backup, source, name),
    );
    const created = await deps.clones
      .createClone(input, capacity, { id: backup.id, customerId: backup.customerId })
      .catch((error: unknown) => {
        if (isUniqueViolation(error))
          throw new DomainError('name_taken', `a service named ${name} already exists`);
        throw error;
      });
    try {
      await deps.enqueueRestore(created.restore.id);
    } catch (error) {
      const reason = 'the job queue was unavailable; nothing ran';
      await deps.clones.failUnqueuedClone(created.restore.id, created.service.id, reason);
      throw new DomainError('dependency_unavailable', 'the job queue is unavailable; retry shortly', {
        headers: { 'retry-after': '5' },
        cause: error,
      });
    }
    return created.restore;
  };
}
