import { isDeepStrictEqual } from 'node:util';
import { randomUUID } from 'node:crypto';
import type { CustomerScope } from '@hostctl/auth-policy';
import type { DeployMethod } from '@hostctl/domain';
import type { Db, SqlPool } from '../client.js';
import type { Vault } from '../vault/vault.js';
import type { Deployment, Service } from '../generated/client.ts';
import { isUniqueViolation, StaleVariablesError } from '../errors.js';
import { CAP_TRANSACTION } from './count-cap-lock.js';
import { claimBuild } from './build-quota.js';
import {
  claimCapacity,
  claimColumns,
  claimDeploy,
  customerOfService,
  lockCustomerQuota,
  type CapacityClaim,
} from './quota-ledger.js';
import { requestRollback, supersedeQueued, type RollbackOutcome, type Tx } from './release-rollback.js';
import { setServiceGroups } from './variable-groups.store.js';
import { serviceByIdStatement } from './services.sql.js';
import { createServicesList } from './services-list.js';

export type { ServiceListQuery, ServiceSort } from './services.sql.js';
export type { ServiceListRow } from './services-list.js';
export type { RollbackOutcome, RollbackRefusal } from './release-rollback.js';

export type ServiceWithCustomer = Service & { customer: { name: string } };
/** A service as its detail shows it: with its variable groups' ids in attach order. */
export type ServiceDetailRow = ServiceWithCustomer & { groupIds: string[] };

export interface NewService {
  name: string;
  customerId: string;
  deployMethod: DeployMethod;
  templateId?: string | null;
  compose: string;
  /** Every variable's value, secret ones included (sealed whole at rest). */
  variables: Record<string, string>;
  /** Which of `variables` are secret: name → when its value was set (ISO 8601). */
  secretNames?: Record<string, string>;
  gitUrl?: string | null;
  gitBranch?: string | null;
  aiUrl?: string | null;
  url: string;
  /** Variable groups of the same customer, in attach order (docs/secrets.md#variable-groups). */
  variableGroups?: string[];
}

/** What a service's definition changes to: new variables can change replicas and limits. */
export interface ServiceChanges {
  variables?: Record<string, string>;
  secretNames?: Record<string, string>;
  customDomains?: string[];
  /** HTTPS behaviour of the service's routes (docs/tls.md#https-and-plain-http). */
  httpsRedirect?: boolean;
  hstsMaxAge?: number | null;
  capacity?: CapacityClaim;
  /** Replaces the attached variable groups (ids of the service's customer, in order). */
  variableGroups?: string[];
  /**
   * The variables and secret names `variables` and `secretNames` were computed from (a merge of a
   * PATCH into a read). When the row no longer holds them at the write, another change landed in
   * between and writing would lose it: the write throws StaleVariablesError instead, for the
   * caller to read again and merge again.
   */
  variablesReadAs?: { variables: unknown; secretNames: unknown };
}

export type ServicesStore = ReturnType<typeof createServicesStore>;

/**
 * Queues a redeploy in the caller's transaction. `commit` pins it to one sha (a push webhook): the
 * worker then checks out exactly that commit rather than the branch's head.
 */
export async function queueRedeploy(
  tx: Tx,
  serviceId: string,
  commit: string | null = null,
): Promise<{ deployment: Deployment; coalesced: boolean }> {
  // The customer's quota lock before the service row (quota-ledger.ts), then the service row, as
  // rollback and cancel take it: every transaction that changes a service's queue locks service
  // then deployment, so two of them never wait on each other.
  const customerId = await customerOfService(tx, serviceId);
  if (customerId !== null) await lockCustomerQuota(tx, customerId);
  const [locked] = await tx.$queryRaw<{ deployMethod: DeployMethod }[]>`
    SELECT deploy_method AS "deployMethod" FROM services WHERE id = ${serviceId} FOR UPDATE`;
  const queued = await tx.deployment.findFirst({ where: { serviceId, status: 'queued' } });
  // A redeploy asks for the newest inputs (a git branch's new head, unpinned images): it replaces
  // a rollback still waiting rather than joining it and running an old release instead. It joins
  // a queued redeploy only when that one asks for the same commit (both unpinned, or the same
  // sha): a push of a newer commit replaces the older push's deployment, which never runs.
  const id = randomUUID();
  const joinable = queued && queued.trigger !== 'rollback' && queued.requestedCommit === commit;
  if (queued && !joinable) await supersedeQueued(tx, serviceId, { kind: 'redeploy', id });
  else if (queued) {
    await tx.serviceEvent.create({
      data: {
        serviceId,
        type: 'redeploy',
        status: 'info',
        message: `Redeploy requested; joined deployment ${queued.id}, which is still queued`,
      },
    });
    return { deployment: queued, coalesced: true };
  }
  // Joining a queued deployment adds none; a new one counts against deploys_per_hour.
  // A git/ai redeploy builds: it needs a build minute left (build-quota.ts).
  if (customerId !== null) {
    await claimDeploy(tx, customerId);
    if (locked) await claimBuild(tx, customerId, locked.deployMethod);
  }
  const deployment = await tx.deployment.create({
    data: { id, serviceId, trigger: 'redeploy', requestedCommit: commit, commit },
  });
  await tx.service.update({ where: { id: serviceId }, data: { status: 'deploying' } });
  const pinned = commit ? ` for commit ${commit}` : '';
  await tx.serviceEvent.create({
    data: {
      serviceId,
      type: 'redeploy',
      status: 'started',
      message: `Redeployment ${deployment.id} queued${pinned}`,
    },
  });
  return { deployment, coalesced: false };
}

/**
 * Two replicas may both find no queued deployment and both insert one: the partial unique index
 * (one queued deployment per service) lets one commit, and the other, run again, coalesces into it.
 */
export async function retryOnceOnConflict<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    return run();
  }
}

/**
 * Locks the service's row (after any quota lock, the order every writer takes) and compares its
 * variables with what the caller merged into. Values compare opened: the sealed text differs on
 * every write even for equal values.
 */
async function assertVariablesUnchanged(
  tx: Tx,
  serviceId: string,
  readAs: NonNullable<ServiceChanges['variablesReadAs']>,
): Promise<void> {
  await tx.$queryRaw`SELECT 1 FROM services WHERE id = ${serviceId} FOR UPDATE`;
  const now = await tx.service.findUniqueOrThrow({
    where: { id: serviceId },
    select: { variables: true, secretNames: true },
  });
  if (
    !isDeepStrictEqual(now.variables, readAs.variables) ||
    !isDeepStrictEqual(now.secretNames, readAs.secretNames)
  )
    throw new StaleVariablesError(serviceId);
}

/** `vault` opens the variables of rows read with raw SQL (the client opens only Prisma's results). */
export function createServicesStore(db: Db, sql: SqlPool, vault: Pick<Vault, 'openAll'>) {
  return {
    /** The hot read of the dashboard and CI: one SQL statement on the pg pool (page + total). */
    list: createServicesList(sql),

    async findById(scope: CustomerScope, id: string): Promise<ServiceWithCustomer | null> {
      const statement = serviceByIdStatement(scope, id);
      if (statement === null) return null;
      const { rows } = await sql.query<ServiceWithCustomer>(statement);
      return rows[0] ? vault.openAll(rows[0]) : null;
    },

    /** findById with the attached variable groups' ids in attach order, in the same statement. */
    async findDetailById(scope: CustomerScope, id: string): Promise<ServiceDetailRow | null> {
      const statement = serviceByIdStatement(scope, id, { withGroups: true });
      if (statement === null) return null;
      const { rows } = await sql.query<ServiceDetailRow>(statement);
      return rows[0] ? vault.openAll(rows[0]) : null;
    },

    /**
     * Creates the service, its first deployment and the "deploy started" event in one transaction:
     * the caller enqueues only after commit, so a worker never sees an uncommitted row.
     */
    async createWithDeployment(
      input: NewService,
      capacity: CapacityClaim,
    ): Promise<{ service: Service; deployment: Deployment }> {
      const { variableGroups, ...columns } = input;
      return db.$transaction(async (tx) => {
        await claimCapacity(tx, input.customerId, capacity);
        await claimDeploy(tx, input.customerId);
        await claimBuild(tx, input.customerId, input.deployMethod);
        const service = await tx.service.create({
          data: { ...columns, ...claimColumns(capacity), status: 'deploying' },
        });
        if (variableGroups) await setServiceGroups(tx, service.id, variableGroups);
        const deployment = await tx.deployment.create({ data: { serviceId: service.id, trigger: 'create' } });
        await tx.serviceEvent.create({
          data: {
            serviceId: service.id,
            type: 'deploy',
            status: 'started',
            message: `Deployment ${deployment.id} queued`,
          },
        });
        return { service, deployment };
      }, CAP_TRANSACTION);
    },

    /**
     * Saves new deploy inputs and queues the redeploy that applies them, in one transaction. New
     * variables can change replicas and limits: the service is counted again against its
     * customer's quotas (growth only; quota-ledger.ts).
     */
    async updateAndRedeploy(
      serviceId: string,
      customerId: string,
      changes: ServiceChanges,
      guard?: (tx: Tx) => Promise<void>,
    ): Promise<{ deployment: Deployment; coalesced: boolean }> {
      const { capacity, variableGroups, variablesReadAs, ...rest } = changes;
      return retryOnceOnConflict(() =>
        db.$transaction(async (tx) => {
          if (capacity) await claimCapacity(tx, customerId, capacity, serviceId);
          if (variablesReadAs) await assertVariablesUnchanged(tx, serviceId, variablesReadAs);
          await tx.service.update({
            where: { id: serviceId },
            data: { ...rest, ...(capacity ? claimColumns(capacity) : {}) },
          });
          // Under the service's row lock (the update above): a precondition of the caller's (checkAttachment).
          if (guard) await guard(tx);
          if (variableGroups) await setServiceGroups(tx, serviceId, variableGroups);
          return queueRedeploy(tx, serviceId);
        }, CAP_TRANSACTION),
      );
    },

    /** Live services other than `exceptId` that already claim any of these custom domains. */
    async findDomainClaims(domains: string[], exceptId: string): Promise<string[]> {
      if (domains.length === 0) return [];
      const rows = await db.service.findMany({
        where: { deletedAt: null, id: { not: exceptId }, customDomains: { hasSome: domains } },
        select: { customDomains: true },
      });
      const wanted = new Set(domains);
      return rows.flatMap((row) => row.customDomains.filter((domain) => wanted.has(domain)));
    },

    /**
     * Queues a redeploy. While one is already waiting in the queue the request coalesces into it
     * (the partial unique index allows one queued deployment per service) and its id is returned.
     */
    async requestRedeploy(serviceId: string): Promise<{ deployment: Deployment; coalesced: boolean }> {
      return retryOnceOnConflict(() => db.$transaction((tx) => queueRedeploy(tx, serviceId)));
    },

    /** Queues a rollback (release-rollback.ts); a concurrent redeploy's insert makes it run once more. */
    async requestRollback(
      serviceId: string,
      targetId: string | undefined,
      options: { mayChangeDefinition: boolean },
    ): Promise<RollbackOutcome> {
      return retryOnceOnConflict(() => requestRollback(db, serviceId, targetId, options));
    },

    /** Hides the service from the API at once and cancels queued deployments; the worker purges. */
    async markDeleted(serviceId: string): Promise<void> {
      await db.$transaction([
        db.service.update({ where: { id: serviceId }, data: { deletedAt: new Date() } }),
        db.deployment.updateMany({
          where: { serviceId, status: 'queued' },
          data: { status: 'cancelled', finishedAt: new Date(), error: 'service deleted' },
        }),
        db.serviceEvent.create({
          data: { serviceId, type: 'delete', status: 'started', message: 'Deletion requested' },
        }),
      ]);
    },
  };
}
