import { customerScope, type Principal } from '@hostctl/auth-policy';
import type { BackupRun, BackupsStore, RestoreRun, ServicesStore } from '@hostctl/db';
import { DomainError } from '@hostctl/domain';
import { checkRestorable } from './backup-clone.js';
import type { Backup, Restore } from './backups.schemas.js';

export type BackupsService = ReturnType<typeof createBackupsService>;

interface BackupsServiceDeps {
  store: BackupsStore;
  services: Pick<ServicesStore, 'findById'>;
  /** Hands a committed run to a worker; rejects when the queue is unreachable. */
  enqueue: (run: HandOff) => Promise<void>;
  /** Restores into a new service (backup-clone.ts); answers its restore run. */
  clone: (principal: Principal, backupId: string, name: string) => Promise<RestoreRun>;
}

type HandOff =
  | { kind: 'backup'; backupId: string }
  | { kind: 'restore'; restoreId: string }
  | { kind: 'verify'; backupId: string };

const iso = (date: Date | null) => (date ? date.toISOString() : null);

function toBackup(row: BackupRun): Backup {
  return {
    id: row.id,
    service_id: row.serviceId,
    status: row.status,
    method: row.method,
    target: row.target,
    release_id: row.deploymentId,
    volumes: row.volumes,
    size_bytes: row.sizeBytes,
    duration_ms: row.durationMs,
    error: row.error,
    log: row.log,
    verify_status: row.verifyStatus,
    verify_error: row.verifyError,
    verified_at: iso(row.verifiedAt),
    last_restore: row.lastRestore
      ? {
          id: row.lastRestore.id,
          service_id: row.lastRestore.serviceId,
          status: row.lastRestore.status,
          error: row.lastRestore.error,
          created_at: row.lastRestore.createdAt.toISOString(),
          finished_at: iso(row.lastRestore.finishedAt),
        }
      : null,
    scheduled_for: iso(row.scheduledFor),
    created_at: row.createdAt.toISOString(),
    started_at: iso(row.startedAt),
    finished_at: iso(row.finishedAt),
  };
}

function toRestore(row: RestoreRun): Restore {
  return {
    id: row.id,
    backup_id: row.backupId,
    service_id: row.serviceId,
    status: row.status,
    error: row.error,
    log: row.log,
    created_at: row.createdAt.toISOString(),
    started_at: iso(row.startedAt),
    finished_at: iso(row.finishedAt),
  };
}

/**
 * On-demand backups and restores (docs/backups.md). Every read goes through the caller's customer
 * scope: another customer's service, backup or restore is a 404, never a 403, so ids reveal nothing.
 * The worker does the work; the API records the run first and hands the worker its id only.
 */
export function createBackupsService(deps: BackupsServiceDeps) {
  async function visibleService(principal: Principal, id: string) {
    const service = await deps.services.findById(customerScope(principal), id);
    if (!service) throw new DomainError('not_found', `service ${id} not found`);
    return service;
  }

  async function handOver(run: HandOff): Promise<void> {
    try {
      await deps.enqueue(run);
    } catch (error) {
      const reason = 'the job queue was unavailable; nothing ran';
      if (run.kind === 'verify') await deps.store.failUnqueuedVerify(run.backupId, reason);
      else
        await deps.store.failUnqueued(run.kind, run.kind === 'backup' ? run.backupId : run.restoreId, reason);
      throw new DomainError('dependency_unavailable', 'the job queue is unavailable; retry shortly', {
        headers: { 'retry-after': '5' },
        cause: error,
      });
    }
  }

  return {
    async create(principal: Principal, serviceId: string): Promise<Backup> {
      const service = await visibleService(principal, serviceId);
      // The method is decided by the worker from the running release's labels; `live` until then.
      const row = await deps.store.createBackup({
        serviceId: service.id,
        customerId: service.customerId,
        method: 'live',
      });
      await handOver({ kind: 'backup', backupId: row.id });
      return toBackup(row);
    },

    async list(principal: Principal, serviceId: string, query: { page?: number; per_page?: number }) {
      const service = await visibleService(principal, serviceId);
      const page = query.page ?? 1;
      const perPage = query.per_page ?? 20;
      const [{ rows, total }, verified] = await Promise.all([
        deps.store.listForService(service.id, { page, perPage }),
        deps.store.lastVerified(service.id),
      ]);
      return {
        data: rows.map(toBackup),
        total,
        page,
        per_page: perPage,
        // Of the whole service, whatever page is read: the dashboard's "last verified backup".
        last_verified: verified
          ? {
              backup_id: verified.id,
              taken_at: verified.createdAt.toISOString(),
              verified_at: iso(verified.verifiedAt),
            }
          : null,
      };
    },

    async get(principal: Principal, id: string): Promise<Backup> {
      const row = await deps.store.findBackup(customerScope(principal), id);
      if (!row) throw new DomainError('not_found', `backup ${id} not found`);
      return toBackup(row);
    },

    /** Queues a repository check of a succeeded backup; the row tells its outcome. */
    async verify(principal: Principal, backupId: string): Promise<Backup> {
      const backup = await deps.store.findBackup(customerScope(principal), backupId);
      if (!backup) throw new DomainError('not_found', `backup ${backupId} not found`);
      await visibleService(principal, backup.serviceId).catch(() => {
        throw new DomainError('not_found', `backup ${backupId} not found`);
      });
      const queued = await deps.store.requestVerify(backup.id);
      if (!queued)
        throw new DomainError(
          'conflict',
          `backup ${backupId} is ${backup.status}: only a succeeded backup can be verified`,
        );
      await handOver({ kind: 'verify', backupId: backup.id });
      return toBackup(queued);
    },

    async restore(principal: Principal, backupId: string): Promise<Restore> {
      const backup = await deps.store.findBackup(customerScope(principal), backupId);
      if (!backup) throw new DomainError('not_found', `backup ${backupId} not found`);
      // The service too must be in scope and not deleted: a backup outlives neither.
      const service = await visibleService(principal, backup.serviceId).catch(() => {
        throw new DomainError('not_found', `backup ${backupId} not found`);
      });
      checkRestorable(backup);
      const row = await deps.store.createRestore({
        backupId: backup.id,
        serviceId: service.id,
        customerId: backup.customerId,
      });
      await handOver({ kind: 'restore', restoreId: row.id });
      return toRestore(row);
    },

    async clone(principal: Principal, backupId: string, name: string): Promise<Restore> {
      return toRestore(await deps.clone(principal, backupId, name));
    },

    async getRestore(principal: Principal, id: string): Promise<Restore> {
      const row = await deps.store.findRestore(customerScope(principal), id);
      if (!row) throw new DomainError('not_found', `restore ${id} not found`);
      return toRestore(row);
    },
  };
}
