import type { CustomerScope } from '@hostctl/auth-policy';
import { deploymentEventType, type DeploymentStatus } from '@hostctl/domain';
import type { Db } from '../client.js';
import type { Deployment, DeploymentLog } from '../generated/client.ts';
import { customerWhere } from './scope-where.js';
import { alignWithRelease } from './release-definition.js';
import { definitionChangeOf } from './cancel-definition.js';

export type DeploymentsStore = ReturnType<typeof createDeploymentsStore>;

export type DeploymentWithService = Deployment & { service: { id: string; deployMethod: string } };

/** What a history page shows of a deployment: never its plan, logs, compose or variables. */
const SUMMARY_COLUMNS = {
  id: true,
  serviceId: true,
  trigger: true,
  status: true,
  step: true,
  commit: true,
  imageDigest: true,
  imageDigests: true,
  updateOrder: true,
  rollbackOf: true,
  warnings: true,
  error: true,
  createdAt: true,
  startedAt: true,
  finishedAt: true,
} as const;

export type DeploymentSummaryRow = Pick<Deployment, keyof typeof SUMMARY_COLUMNS>;

export type CancelOutcome =
  | { cancelled: true }
  /** Not cancellable; `status` null when the deployment is gone (its service was purged). */
  | { cancelled: false; status: DeploymentStatus | null; step: string | null }
  /** It carries a change of the service's definition and the caller lacks `manage`. */
  | { cancelled: false; needsManage: true; changed: string[] };

const CANCEL_ERROR = 'cancelled by request';

/** Read side of deployments for the API, and the one write the API owns: cancel. */
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

    /**
     * A page of a service's deployments, newest first; the caller has checked the service is
     * visible. The order is the (service_id, created_at) index read backwards; id breaks ties so
     * pages stay stable.
     */
    async listForService(
      serviceId: string,
      page: { page: number; perPage: number },
    ): Promise<{ rows: DeploymentSummaryRow[]; total: number }> {
      const where = { serviceId };
      const [rows, total] = await Promise.all([
        db.deployment.findMany({
          where,
          select: SUMMARY_COLUMNS,
          orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
          skip: (page.page - 1) * page.perPage,
          take: page.perPage,
        }),
        db.deployment.count({ where }),
      ]);
      return { rows, total };
    },

    /** Log lines after a sequence number, oldest first: readers page through with the last seq. */
    logsAfter(deploymentId: string, afterSeq: number, limit: number): Promise<DeploymentLog[]> {
      return db.deploymentLog.findMany({
        where: { deploymentId, seq: { gt: afterSeq } },
        orderBy: { seq: 'asc' },
        take: limit,
      });
    },

    /**
     * Cancels a deployment that is queued or running and not yet retiring the previous release
     * (docs/deployments.md#cancel). One conditional UPDATE decides against the worker: whichever of
     * this and the worker's own conditional writes (claim, setStep('retire'), finish) commits first
     * wins, and the loser sees it. The CTE locks the row first so the status it had before is known:
     * a deployment no worker ever claimed has nobody else to give the service its status back.
     *
     * A queued deployment's service row is locked before the deployment's, the order rollback and
     * redeploy take (they lock the service, then supersede the queued deployment): in the other
     * order a cancel and a rollback of one service deadlocked, and PostgreSQL aborted one as a 500.
     * A running deployment's service is not locked: the worker's finish locks deployment then
     * service, and a cancel of a running deployment writes the deployment only.
     *
     * `mayChangeDefinition` false (a caller without `manage`): a deployment that would change the
     * variables or compose the service runs is not cancelled, since undoing a change `manage` made
     * (a rotated secret) is itself such a change.
     */
    async cancel(id: string, options: { mayChangeDefinition: boolean }): Promise<CancelOutcome> {
      return db.$transaction(async (tx) => {
        const seen = await tx.deployment.findUnique({
          where: { id },
          select: { serviceId: true, status: true },
        });
        if (seen?.status === 'queued') {
          await tx.$queryRaw`SELECT id FROM services WHERE id = ${seen.serviceId} FOR UPDATE`;
        }
        if (seen && !options.mayChangeDefinition) {
          const changed = await definitionChangeOf(tx, id);
          if (changed.length > 0) return { cancelled: false, needsManage: true, changed };
        }
        const updated = await tx.$queryRaw<{ serviceId: string; trigger: string; was: DeploymentStatus }[]>`
          WITH before AS (SELECT id, status FROM deployments WHERE id = ${id} FOR UPDATE)
          UPDATE deployments d
             SET status = 'cancelled', finished_at = now(), error = ${CANCEL_ERROR}
            FROM before
           WHERE d.id = before.id
             AND d.status IN ('queued', 'running')
             AND (d.step IS NULL OR d.step <> 'retire')
          RETURNING d.service_id AS "serviceId", d.trigger, before.status::text AS was`;
        const row = updated[0];
        if (row === undefined) {
          const current = await tx.deployment.findUnique({
            where: { id },
            select: { status: true, step: true },
          });
          return { cancelled: false, status: current?.status ?? null, step: current?.step ?? null };
        }
        await tx.serviceEvent.create({
          data: {
            serviceId: row.serviceId,
            type: deploymentEventType(row.trigger),
            status: 'cancelled',
            message: `Deployment ${id} cancelled by request`,
          },
        });
        if (row.was === 'queued') await restoreServiceStatus(tx, row.serviceId, id);
        return { cancelled: true };
      });
    },
  };
}

type Tx = Parameters<Parameters<Db['$transaction']>[0]>[0];

/**
 * After cancelling a deployment no worker claimed: unless another deployment of the service is in
 * flight (it owns the status now), the service is what its current release makes it: `running`
 * when a succeeded deployment exists (the proxy still routes to it), else `failed`, with the
 * release's variables and compose (the cancelled deployment's change never ran).
 */
async function restoreServiceStatus(tx: Tx, serviceId: string, cancelledId: string): Promise<void> {
  const inFlight = await tx.deployment.findFirst({
    where: { serviceId, id: { not: cancelledId }, status: { in: ['queued', 'running'] } },
    select: { id: true },
  });
  if (inFlight) return;
  const release = await tx.deployment.findFirst({
    where: { serviceId, status: 'succeeded' },
    select: { id: true },
  });
  await tx.service.updateMany({
    where: { id: serviceId, deletedAt: null },
    data: { status: release ? 'running' : 'failed' },
  });
  await alignWithRelease(tx, serviceId);
}
