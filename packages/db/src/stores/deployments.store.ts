import type { CustomerScope } from '@hostctl/auth-policy';
import type { Db } from '../client.js';
import type { Deployment, DeploymentLog } from '../generated/client.ts';
import { customerWhere } from './scope-where.js';

export type DeploymentsStore = ReturnType<typeof createDeploymentsStore>;

export type DeploymentWithService = Deployment & { service: { id: string; deployMethod: string } };

/** Read side of deployments for the API: scoped through the owning service. */
export function createDeploymentsStore(db: Db) {
  return {
    async findVisible(scope: CustomerScope, id: string): Promise<DeploymentWithService | null> {
      const tenant = customerWhere(scope);
      if (tenant === null) return null;
      return db.deployment.findFirst({
        where: { id, service: { ...tenant, deletedAt: null } },
        include: { service: { select: { id: true, deployMethod: true } } },
      });
    },

    /** Log lines after a sequence number, oldest first: readers page through with the last seq. */
    logsAfter(deploymentId: string, afterSeq: number, limit: number): Promise<DeploymentLog[]> {
      return db.deploymentLog.findMany({
        where: { deploymentId, seq: { gt: afterSeq } },
        orderBy: { seq: 'asc' },
        take: limit,
      });
    },
  };
}
