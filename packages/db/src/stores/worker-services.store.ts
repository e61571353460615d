import type { DeployMethod, EventStatus, EventType, ServiceStatus } from '@hostctl/domain';
import type { Db } from '../client.js';
import { insertNotifications } from './notification-outbox.js';
import { readGroupEnvironment, type GroupEnvironment } from './group-environment.js';

/** The worker's view of services: no tenant scope here, the worker acts on ids the API accepted. */
export interface WorkerService {
  id: string;
  name: string;
  status: ServiceStatus;
  deployMethod: DeployMethod;
  compose: string;
  /** Every variable's value, secret ones included. */
  variables: Record<string, string>;
  /** Which of `variables` are secret (name → when set): never shown, masked in what is published. */
  secretNames: Record<string, string>;
  /** Which write of `variables` this is (services.variables_version, bumped by the database). */
  variablesVersion: number;
  /**
   * The attached variable groups, merged (docs/secrets.md#variable-groups): the environment is
   * `environmentOf(service)`, never `variables` alone.
   */
  groups: GroupEnvironment;
  url: string;
  /** git/ai sources (the worker checks them again before fetching). */
  gitUrl: string | null;
  gitBranch: string | null;
  aiUrl: string | null;
  /** Extra host names routed to the web container and published in DNS. */
  customDomains: string[];
  deletedAt: Date | null;
  purgedAt: Date | null;
}

export interface WorkerEvent {
  type: EventType;
  status: EventStatus;
  /** Shown to users: never put variable values here. */
  message: string;
}

function toVariables(value: unknown): Record<string, string> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return {};
  return Object.fromEntries(
    Object.entries(value).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );
}

export function createWorkerServiceStore(db: Db) {
  return {
    async findById(id: string): Promise<WorkerService | null> {
      const row = await db.service.findUnique({
        where: { id },
        select: {
          id: true,
          name: true,
          status: true,
          deployMethod: true,
          compose: true,
          variables: true,
          secretNames: true,
          variablesVersion: true,
          url: true,
          gitUrl: true,
          gitBranch: true,
          aiUrl: true,
          customDomains: true,
          deletedAt: true,
          purgedAt: true,
        },
      });
      if (!row) return null;
      return {
        ...row,
        variables: toVariables(row.variables),
        secretNames: toVariables(row.secretNames),
        groups: await readGroupEnvironment(db, id),
      };
    },

    /**
     * Sets the status and writes the event in one transaction. `from` makes it conditional (the
     * reconciler must not overwrite a status a job just set); returns whether it changed.
     */
    async setStatus(
      id: string,
      status: ServiceStatus,
      event?: WorkerEvent,
      from?: ServiceStatus[],
    ): Promise<boolean> {
      return db.$transaction(async (tx) => {
        const before = await tx.service.findUnique({ where: { id }, select: { status: true } });
        const updated = await tx.service.updateMany({
          where: { id, deletedAt: null, ...(from ? { status: { in: from } } : {}) },
          data: { status },
        });
        if (updated.count === 0) return false;
        if (event) await tx.serviceEvent.create({ data: { serviceId: id, ...event } });
        // Becoming failed (crash loop, crashed containers, a failed start) notifies; staying failed does not.
        if (status === 'failed' && before?.status !== 'failed')
          await insertNotifications(tx, {
            event: 'service.failed',
            serviceId: id,
            message: event?.message ?? 'Service failed',
          });
        return true;
      });
    },

    async addEvent(serviceId: string, event: WorkerEvent): Promise<void> {
      await db.serviceEvent.create({ data: { serviceId, ...event } });
    },

    /** Events of one kind since a time; the reconciler bounds how often it restores a service. */
    async countEventsSince(
      serviceId: string,
      filter: { type: EventType; status?: EventStatus; messageStartsWith: string; since: Date },
    ): Promise<number> {
      return db.serviceEvent.count({
        where: {
          serviceId,
          type: filter.type,
          ...(filter.status ? { status: filter.status } : {}),
          message: { startsWith: filter.messageStartsWith },
          createdAt: { gte: filter.since },
        },
      });
    },

    /** The end of a delete: the customer's subscribers hear of it once, with the purge. */
    async markPurged(id: string): Promise<void> {
      await db.$transaction(async (tx) => {
        const done = await tx.service.updateMany({
          where: { id, purgedAt: null },
          data: { purgedAt: new Date() },
        });
        if (done.count === 0) return;
        const service = await tx.service.findUnique({ where: { id }, select: { name: true } });
        await insertNotifications(tx, {
          event: 'service.deleted',
          serviceId: id,
          message: `Service ${service?.name ?? id} was deleted and its containers, networks and volumes removed`,
        });
      });
    },

    async listPendingDeletes(): Promise<string[]> {
      const rows = await db.service.findMany({
        where: { deletedAt: { not: null }, purgedAt: null },
        select: { id: true },
        take: 500,
      });
      return rows.map((row) => row.id);
    },

    /** Ids among `ids` that still own Docker objects: known, and not purged. */
    async listLiveIds(ids: string[]): Promise<Set<string>> {
      if (ids.length === 0) return new Set();
      const rows = await db.service.findMany({
        where: { id: { in: ids }, purgedAt: null },
        select: { id: true },
      });
      return new Set(rows.map((row) => row.id));
    },

    async listRunningIds(): Promise<string[]> {
      const rows = await db.service.findMany({
        where: { status: 'running', deletedAt: null },
        select: { id: true },
      });
      return rows.map((row) => row.id);
    },
  };
}

export type WorkerServiceStore = ReturnType<typeof createWorkerServiceStore>;
