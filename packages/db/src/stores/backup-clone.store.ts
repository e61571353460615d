import type { Db } from '../client.js';
import { CAP_TRANSACTION } from './count-cap-lock.js';
import { groupVersionsOf } from './group-environment.js';
import { claimBuild } from './build-quota.js';
import { claimCapacity, claimColumns, claimDeploy, type CapacityClaim } from './quota-ledger.js';
import type { NewService } from './services.store.js';
import { setServiceGroups } from './variable-groups.store.js';

/**
 * A restore into a new service cloned from a backup (docs/backups.md#restore-into-a-new-service).
 * The new service is created like any other (same quota claims, in one transaction) but without
 * its first deployment: that is created by the worker once the volumes hold the snapshot's data,
 * so no container of the clone can ever start on empty volumes (the reconciler re-enqueues any
 * queued deployment, so a queued row created here could start before the restore).
 */

/** What a release ran: null parts were not recorded (older rows). */
export interface ReleaseSource {
  compose: string | null;
  variables: Record<string, string> | null;
  secretNames: Record<string, string> | null;
  groupIds: string[] | null;
}

const asStrings = (value: unknown): Record<string, string> | null =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
    ? Object.fromEntries(
        Object.entries(value).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
      )
    : null;

export type BackupCloneStore = ReturnType<typeof createBackupCloneStore>;

export function createBackupCloneStore(db: Db) {
  return {
    /** The definition a release (deployment) of `serviceId` ran; null when there is none. */
    async releaseSource(serviceId: string, deploymentId: string): Promise<ReleaseSource | null> {
      const row = await db.deployment.findFirst({
        where: { id: deploymentId, serviceId },
        select: {
          sourceCompose: true,
          sourceVariables: true,
          sourceSecretNames: true,
          sourceVariableGroups: true,
        },
      });
      if (!row) return null;
      return {
        compose: row.sourceCompose,
        variables: asStrings(row.sourceVariables),
        secretNames: asStrings(row.sourceSecretNames),
        groupIds: groupVersionsOf(row.sourceVariableGroups)?.map((group) => group.group_id) ?? null,
      };
    },

    /**
     * Creates the service (status `deploying`), claiming the customer's quotas as a create does,
     * and the restore run that fills its volumes, in one transaction.
     */
    async createClone(
      input: NewService,
      capacity: CapacityClaim,
      backup: { id: string; customerId: string },
    ) {
      const { variableGroups, ...columns } = input;
      return db.$transaction(async (tx) => {
        await claimCapacity(tx, input.customerId, capacity);
        await claimDeploy(tx, input.customerId);
        await claimBuild(tx, input.customerId, input.deployMethod);
        const service = await tx.service.create({
          data: { ...columns, ...claimColumns(capacity), status: 'deploying' },
        });
        if (variableGroups) await setServiceGroups(tx, service.id, variableGroups);
        const restore = await tx.backupRestore.create({
          data: { backupId: backup.id, serviceId: service.id, customerId: backup.customerId },
        });
        await tx.serviceEvent.create({
          data: {
            serviceId: service.id,
            type: 'deploy',
            status: 'started',
            message: `Restore ${restore.id} of backup ${backup.id} queued; the first deployment follows it`,
          },
        });
        return { service, restore: { ...restore, status: 'queued' as const } };
      }, CAP_TRANSACTION);
    },

    /** A clone the queue never took: its restore and the new service fail with the reason. */
    async failUnqueuedClone(restoreId: string, serviceId: string, reason: string) {
      await db.$transaction([
        db.backupRestore.update({
          where: { id: restoreId },
          data: { status: 'failed', error: reason, finishedAt: new Date() },
        }),
        db.service.update({ where: { id: serviceId }, data: { status: 'failed' } }),
        db.serviceEvent.create({
          data: { serviceId, type: 'deploy', status: 'failed', message: `Restore failed: ${reason}` },
        }),
      ]);
    },
  };
}

export type WorkerCloneStore = ReturnType<typeof createWorkerCloneStore>;

/** The worker's side of a clone: whose service it is, and its first deployment once filled. */
export function createWorkerCloneStore(db: Db) {
  return {
    async customerOf(serviceId: string): Promise<string | null> {
      const row = await db.service.findUnique({ where: { id: serviceId }, select: { customerId: true } });
      return row?.customerId ?? null;
    },

    /**
     * Records the restore as succeeded and queues the service's first deployment, in one
     * transaction; a retried job finds the deployment there and returns it again.
     */
    async queueFirstDeploy(restoreId: string, serviceId: string): Promise<string> {
      return db.$transaction(async (tx) => {
        const existing = await tx.deployment.findFirst({
          where: { serviceId, trigger: 'create' },
          select: { id: true },
        });
        await tx.backupRestore.update({
          where: { id: restoreId },
          data: { status: 'succeeded', error: null, finishedAt: new Date() },
        });
        if (existing) return existing.id;
        const deployment = await tx.deployment.create({ data: { serviceId, trigger: 'create' } });
        await tx.serviceEvent.create({
          data: {
            serviceId,
            type: 'deploy',
            status: 'started',
            message: `Volumes restored; deployment ${deployment.id} queued`,
          },
        });
        return deployment.id;
      });
    },
  };
}
