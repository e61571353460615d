import type { CustomerScope } from '@hostctl/auth-policy';
import type { DeployMethod, ServiceStatus } from '@hostctl/domain';
import type { Db } from '../client.js';
import type { Deployment, Prisma, Service } from '../generated/client.ts';
import { isUniqueViolation } from '../errors.js';
import { customerWhere } from './scope-where.js';

export type ServiceSort = 'name' | 'status' | 'created_at' | 'updated_at';

export interface ServiceListQuery {
  page: number;
  perPage: number;
  status?: ServiceStatus;
  customerId?: string;
  sort: ServiceSort;
  order: 'asc' | 'desc';
  search?: string;
}

export type ServiceWithCustomer = Service & { customer: { name: string } };

export interface NewService {
  name: string;
  customerId: string;
  deployMethod: DeployMethod;
  templateId?: string | null;
  compose: string;
  variables: Record<string, string>;
  gitUrl?: string | null;
  gitBranch?: string | null;
  aiUrl?: string | null;
  url: string;
}

const SORT_COLUMNS: Record<ServiceSort, keyof Prisma.ServiceOrderByWithRelationInput> = {
  name: 'name',
  status: 'status',
  created_at: 'createdAt',
  updated_at: 'updatedAt',
};

export type ServicesStore = ReturnType<typeof createServicesStore>;

/** The columns a list item shows: never the compose document or variables of every row on a page. */
const LIST_COLUMNS = {
  id: true,
  name: true,
  status: true,
  url: true,
  customerId: true,
  templateId: true,
  deployMethod: true,
  createdAt: true,
  updatedAt: true,
  cpuUsage: true,
  memoryUsageMb: true,
  memoryLimitMb: true,
} as const satisfies Prisma.ServiceSelect;

export type ServiceListRow = Prisma.ServiceGetPayload<{ select: typeof LIST_COLUMNS }>;

type Tx = Parameters<Parameters<Db['$transaction']>[0]>[0];

async function queueRedeploy(
  tx: Tx,
  serviceId: string,
): Promise<{ deployment: Deployment; coalesced: boolean }> {
  const queued = await tx.deployment.findFirst({ where: { serviceId, status: 'queued' } });
  if (queued) {
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
  const deployment = await tx.deployment.create({ data: { serviceId, trigger: 'redeploy' } });
  await tx.service.update({ where: { id: serviceId }, data: { status: 'deploying' } });
  await tx.serviceEvent.create({
    data: { serviceId, type: 'redeploy', status: 'started', message: `Redeployment ${deployment.id} queued` },
  });
  return { deployment, coalesced: false };
}

/**
 * Two replicas may both find no queued deployment and both insert one: the partial unique index
 * (one queued deployment per service) lets one commit, and the other, run again, coalesces into it.
 */
async function retryOnceOnConflict<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    return run();
  }
}

export function createServicesStore(db: Db) {
  /** Live (not deleted) services inside the scope; null when the scope sees nothing. */
  const visible = (scope: CustomerScope): Prisma.ServiceWhereInput | null => {
    const tenant = customerWhere(scope);
    return tenant === null ? null : { ...tenant, deletedAt: null };
  };

  return {
    async list(
      scope: CustomerScope,
      query: ServiceListQuery,
    ): Promise<{ rows: ServiceListRow[]; total: number }> {
      const base = visible(scope);
      if (base === null) return { rows: [], total: 0 };
      if (
        query.customerId !== undefined &&
        base.customerId !== undefined &&
        base.customerId !== query.customerId
      ) {
        return { rows: [], total: 0 };
      }
      const where: Prisma.ServiceWhereInput = {
        ...base,
        ...(query.customerId !== undefined ? { customerId: query.customerId } : {}),
        ...(query.status !== undefined ? { status: query.status } : {}),
        ...(query.search ? { name: { contains: query.search, mode: 'insensitive' } } : {}),
      };
      // id as a tie-breaker keeps pages stable when many rows share a sort value.
      const orderBy: Prisma.ServiceOrderByWithRelationInput[] = [
        { [SORT_COLUMNS[query.sort]]: query.order },
        { id: query.order },
      ];
      const [rows, total] = await Promise.all([
        db.service.findMany({
          where,
          orderBy,
          select: LIST_COLUMNS,
          skip: (query.page - 1) * query.perPage,
          take: query.perPage,
        }),
        db.service.count({ where }),
      ]);
      return { rows, total };
    },

    async findById(scope: CustomerScope, id: string): Promise<ServiceWithCustomer | null> {
      const base = visible(scope);
      if (base === null) return null;
      return db.service.findFirst({
        where: { ...base, id },
        include: { customer: { select: { name: true } } },
      });
    },

    /**
     * Creates the service, its first deployment and the "deploy started" event in one transaction:
     * the caller enqueues only after commit, so a worker never sees an uncommitted row.
     */
    async createWithDeployment(input: NewService): Promise<{ service: Service; deployment: Deployment }> {
      return db.$transaction(async (tx) => {
        const service = await tx.service.create({ data: { ...input, status: 'deploying' } });
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
      });
    },

    /** Saves new deploy inputs and queues the redeploy that applies them, in one transaction. */
    async updateAndRedeploy(
      serviceId: string,
      changes: { variables?: Record<string, string>; customDomains?: string[] },
    ): Promise<{ deployment: Deployment; coalesced: boolean }> {
      return retryOnceOnConflict(() =>
        db.$transaction(async (tx) => {
          await tx.service.update({ where: { id: serviceId }, data: changes });
          return queueRedeploy(tx, serviceId);
        }),
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
