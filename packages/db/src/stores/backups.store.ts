import type { CustomerScope } from '@hostctl/auth-policy';
import type { Db } from '../client.js';
import type { Backup as BackupRow, BackupRestore as RestoreRow } from '../generated/client.ts';
import type { RetentionOverrides } from './backup-schedules.store.js';
import { insertNotifications } from './notification-outbox.js';
import { customerWhere } from './scope-where.js';

export type BackupsStore = ReturnType<typeof createBackupsStore>;

/**
 * queued → running → succeeded | failed; a succeeded backup whose snapshots the retention policy
 * forgot becomes `expired`; a scheduled time no worker reached is recorded `missed`. Only
 * `succeeded` backups can be restored.
 */
export type BackupStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'expired' | 'missed';
/** The last repository check of a backup (docs/backups.md#verification). */
export type VerifyStatus = 'queued' | 'running' | 'passed' | 'failed';

/** How a component's volumes are kept consistent while restic reads them (docs/backups.md). */
export type BackupMethod = 'stop' | 'live';

/** One named volume of a backup: the restic snapshot that holds it. */
// A type, not an interface: it is stored as JSON, which needs the implicit index signature.
export type BackedUpVolume = {
  name: string;
  snapshot_id: string;
  bytes: number;
  files: number;
};

export interface BackupRun {
  id: string;
  serviceId: string;
  customerId: string;
  status: BackupStatus;
  method: BackupMethod;
  target: string;
  /** For the `customer` target: `<endpoint>/<bucket>/<prefix>` of the bucket it went to. */
  targetLocation: string | null;
  deploymentId: string | null;
  volumes: BackedUpVolume[];
  sizeBytes: number | null;
  durationMs: number | null;
  log: string;
  error: string | null;
  verifyStatus: VerifyStatus | null;
  verifyError: string | null;
  verifiedAt: Date | null;
  /** The time of the service's backup schedule it stands for; null: on demand. */
  scheduledFor: Date | null;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  /**
   * The newest restore of this backup (into its service or a clone), as the API's reads give it;
   * undefined where it was not read (the worker's reads, a backup just created).
   */
  lastRestore?: RestoreRun | null;
}

export interface RestoreRun {
  id: string;
  backupId: string;
  serviceId: string;
  customerId: string;
  status: Exclude<BackupStatus, 'expired' | 'missed'>;
  keptVolumes: string[];
  log: string;
  error: string | null;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
}

export interface BackupOutcome {
  status: 'succeeded' | 'failed';
  /** The target the worker wrote to (`local`, `s3`, `customer`): the backup is restored from it only. */
  target: string;
  /** The customer's bucket (`customer` target only); null or left out for the operator's. */
  targetLocation?: string | null;
  method: BackupMethod;
  deploymentId: string | null;
  volumes: BackedUpVolume[];
  sizeBytes: number | null;
  durationMs: number;
  error: string | null;
}

const toRestore = (row: RestoreRow): RestoreRun => ({
  ...row,
  status: row.status as RestoreRun['status'],
});
const toBackup = ({ restores, ...row }: BackupRow & { restores?: RestoreRow[] }): BackupRun => ({
  ...row,
  ...(restores ? { lastRestore: restores[0] ? toRestore(restores[0]) : null } : {}),
  status: row.status as BackupStatus,
  verifyStatus: row.verifyStatus as VerifyStatus | null,
  method: row.method as BackupMethod,
  volumes: Array.isArray(row.volumes) ? (row.volumes as unknown as BackedUpVolume[]) : [],
  sizeBytes: row.sizeBytes === null ? null : Number(row.sizeBytes),
});

/**
 * Backups and restores (docs/backups.md). Reads the API serves take the caller's CustomerScope:
 * another customer's backup is simply not found. The worker's writes go by id: the job payload
 * carries nothing else, and the row says whose repository it is.
 */
/** The newest restore of each backup read, for the API's answers (`last_restore`). */
const withLastRestore = {
  restores: { orderBy: [{ createdAt: 'desc' as const }, { id: 'desc' as const }], take: 1 },
};

export function createBackupsStore(db: Db) {
  return {
    async createBackup(input: { serviceId: string; customerId: string; method: BackupMethod }) {
      return { ...toBackup(await db.backup.create({ data: input })), lastRestore: null };
    },

    async listForService(serviceId: string, page: { page: number; perPage: number }) {
      const where = { serviceId };
      const [rows, total] = await Promise.all([
        db.backup.findMany({
          where,
          orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
          skip: (page.page - 1) * page.perPage,
          take: page.perPage,
          include: withLastRestore,
        }),
        db.backup.count({ where }),
      ]);
      return { rows: rows.map(toBackup), total };
    },

    /**
     * The service's newest restorable backup whose last check passed (docs/backups.md#verification):
     * how old the newest data proven restorable is. Null while none is.
     */
    async lastVerified(serviceId: string) {
      return db.backup.findFirst({
        where: { serviceId, status: 'succeeded', verifyStatus: 'passed' },
        orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
        select: { id: true, createdAt: true, verifiedAt: true },
      });
    },

    async findBackup(scope: CustomerScope, id: string): Promise<BackupRun | null> {
      const where = customerWhere(scope);
      if (!where) return null;
      const row = await db.backup.findFirst({ where: { id, ...where }, include: withLastRestore });
      return row ? toBackup(row) : null;
    },

    /** A run the queue never took (Redis down): failed with the reason, never left `queued`. */
    async failUnqueued(kind: 'backup' | 'restore', id: string, reason: string) {
      const data = { status: 'failed', error: reason, finishedAt: new Date() };
      if (kind === 'backup') await db.backup.update({ where: { id }, data });
      else await db.backupRestore.update({ where: { id }, data });
    },

    /**
     * Asks for a check of a succeeded backup; false when it is not (or no longer) succeeded. A
     * check already queued or running is asked for again, which the job id makes a no-op.
     */
    async requestVerify(id: string): Promise<BackupRun | null> {
      const { count } = await db.backup.updateMany({
        where: { id, status: 'succeeded' },
        data: { verifyStatus: 'queued', verifyError: null },
      });
      if (count === 0) return null;
      const row = await db.backup.findUnique({ where: { id }, include: withLastRestore });
      return row ? toBackup(row) : null;
    },

    async failUnqueuedVerify(id: string, reason: string) {
      await db.backup.update({
        where: { id },
        data: { verifyStatus: 'failed', verifyError: reason, verifiedAt: new Date() },
      });
    },

    async createRestore(input: { backupId: string; serviceId: string; customerId: string }) {
      return toRestore(await db.backupRestore.create({ data: input }));
    },

    async findRestore(scope: CustomerScope, id: string): Promise<RestoreRun | null> {
      const where = customerWhere(scope);
      if (!where) return null;
      const row = await db.backupRestore.findFirst({ where: { id, ...where } });
      return row ? toRestore(row) : null;
    },
  };
}

export type WorkerBackupsStore = ReturnType<typeof createWorkerBackupsStore>;

/**
 * The worker's side: claim, log and finish runs. A run is claimed again after a crash (the job is
 * retried): its log says so, and a snapshot is listed only once the whole run succeeded.
 */
export function createWorkerBackupsStore(db: Db) {
  const appendSql =
    (table: 'backups' | 'backup_restores') =>
    // One statement per step (a handful per run), never a rewrite of the whole column per line.
    async (id: string, line: string) => {
      const stamped = `${new Date().toISOString()} ${line}\n`;
      if (table === 'backups')
        await db.$executeRaw`UPDATE backups SET log = log || ${stamped} WHERE id = ${id}`;
      else await db.$executeRaw`UPDATE backup_restores SET log = log || ${stamped} WHERE id = ${id}`;
    };
  return {
    async findBackup(id: string): Promise<BackupRun | null> {
      const row = await db.backup.findUnique({ where: { id } });
      return row ? toBackup(row) : null;
    },
    async findRestore(id: string): Promise<RestoreRun | null> {
      const row = await db.backupRestore.findUnique({ where: { id } });
      return row ? toRestore(row) : null;
    },
    async startBackup(id: string) {
      await db.backup.update({ where: { id }, data: { status: 'running', startedAt: new Date() } });
    },
    async startRestore(id: string) {
      await db.backupRestore.update({ where: { id }, data: { status: 'running', startedAt: new Date() } });
    },
    appendBackupLog: appendSql('backups'),
    appendRestoreLog: appendSql('backup_restores'),
    /** Records the outcome; a failed run notifies backup.failed in the same transaction (the outbox). */
    async finishBackup(id: string, outcome: BackupOutcome) {
      await db.$transaction(async (tx) => {
        const row = await tx.backup.update({
          where: { id },
          data: {
            status: outcome.status,
            target: outcome.target,
            targetLocation: outcome.targetLocation ?? null,
            method: outcome.method,
            deploymentId: outcome.deploymentId,
            volumes: outcome.volumes,
            sizeBytes: outcome.sizeBytes === null ? null : BigInt(outcome.sizeBytes),
            durationMs: outcome.durationMs,
            error: outcome.error,
            finishedAt: new Date(),
          },
        });
        if (outcome.status === 'failed')
          await insertNotifications(tx, {
            event: 'backup.failed',
            serviceId: row.serviceId,
            backup: { id, status: 'failed', scheduledFor: row.scheduledFor, error: outcome.error },
            message: `backup ${id} failed: ${outcome.error ?? 'no reason given'}`,
          });
      });
    },
    /** The retention the service's backup schedule sets through the API, null without a schedule. */
    async retentionOverrides(serviceId: string): Promise<RetentionOverrides | null> {
      return db.backupSchedule.findUnique({
        where: { serviceId },
        select: { keepLast: true, keepDaily: true, keepWeekly: true, keepMonthly: true },
      });
    },
    /**
     * Marks `expired` every succeeded backup of the service in that customer's repository on that
     * target of which a snapshot is no longer kept; returns their ids. Only the rows of the
     * repository that was pruned: a backup on another target or of another customer is untouched.
     */
    async expireBackups(input: {
      serviceId: string;
      customerId: string;
      target: string;
      /** The customer's bucket for the `customer` target: another bucket's backups are not pruned here. */
      targetLocation?: string | null;
      keptSnapshots: Set<string>;
      reason: string;
    }): Promise<string[]> {
      const rows = await db.backup.findMany({
        where: {
          serviceId: input.serviceId,
          customerId: input.customerId,
          target: input.target,
          targetLocation: input.targetLocation ?? null,
          status: 'succeeded',
        },
      });
      const gone = rows
        .map(toBackup)
        .filter((row) => row.volumes.some((volume) => !input.keptSnapshots.has(volume.snapshot_id)))
        .map((row) => row.id);
      if (gone.length === 0) return [];
      await db.backup.updateMany({
        where: { id: { in: gone }, status: 'succeeded' },
        data: { status: 'expired', error: input.reason },
      });
      const line = `${new Date().toISOString()} expired: ${input.reason}\n`;
      for (const id of gone) await db.$executeRaw`UPDATE backups SET log = log || ${line} WHERE id = ${id}`;
      return gone;
    },
    async startVerify(id: string) {
      await db.backup.update({ where: { id }, data: { verifyStatus: 'running' } });
    },
    /** Records the check's outcome; a failed check notifies backup.verify_failed in the same transaction. */
    async finishVerify(id: string, outcome: { status: 'passed' | 'failed'; error: string | null }) {
      await db.$transaction(async (tx) => {
        const row = await tx.backup.update({
          where: { id },
          data: { verifyStatus: outcome.status, verifyError: outcome.error, verifiedAt: new Date() },
        });
        if (outcome.status === 'failed')
          await insertNotifications(tx, {
            event: 'backup.verify_failed',
            serviceId: row.serviceId,
            backup: { id, status: row.status, scheduledFor: row.scheduledFor, error: outcome.error },
            message: `the check of backup ${id} failed: ${outcome.error ?? 'no reason given'}`,
          });
      });
    },
    async markKept(id: string, volume: string) {
      await db.backupRestore.update({ where: { id }, data: { keptVolumes: { push: volume } } });
    },
    async finishRestore(id: string, outcome: { status: 'succeeded' | 'failed'; error: string | null }) {
      await db.backupRestore.update({
        where: { id },
        data: { status: outcome.status, error: outcome.error, finishedAt: new Date() },
      });
    },
  };
}
