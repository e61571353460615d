import type { DeploymentStatus } from '@hostctl/domain';
import type { Db } from '../client.js';
import type { Prisma } from '../generated/client.ts';
import type { InputJsonValue } from '../generated/internal/prismaNamespace.ts';

/**
 * The worker's reads and writes of deployments. Every transition is a conditional update on the
 * current status, so a retried or duplicated job can never move a finished deployment again.
 */
export interface WorkerDeployment {
  id: string;
  serviceId: string;
  trigger: 'create' | 'redeploy';
  status: DeploymentStatus;
  createdAt: Date;
  plan: unknown;
}

export interface DeploymentOutcome {
  deploymentId: string;
  serviceId: string;
  trigger: 'create' | 'redeploy';
  /** Event message; must never contain variable values. */
  message: string;
}

const IN_FLIGHT: DeploymentStatus[] = ['queued', 'running'];

export function createWorkerDeploymentStore(db: Db) {
  const toDeployment = (row: {
    id: string;
    serviceId: string;
    trigger: string;
    status: DeploymentStatus;
    createdAt: Date;
    plan: unknown;
  }): WorkerDeployment => ({
    id: row.id,
    serviceId: row.serviceId,
    trigger: row.trigger === 'redeploy' ? 'redeploy' : 'create',
    status: row.status,
    createdAt: row.createdAt,
    plan: row.plan,
  });
  /** The service keeps the status a newer in-flight deployment gives it: the latest request wins. */
  const noNewerInFlight = (deploymentId: string, createdAt: Date) => ({
    deployments: {
      none: { id: { not: deploymentId }, createdAt: { gt: createdAt }, status: { in: IN_FLIGHT } },
    },
  });

  /**
   * Ends a deployment in one transaction: moves it out of `from` (a retried job finds it moved and
   * does nothing), updates the service unless a newer deployment is still coming, writes one event.
   */
  const finish = (
    outcome: DeploymentOutcome,
    change: {
      from: DeploymentStatus[];
      deployment: Prisma.DeploymentUpdateManyMutationInput;
      service: Prisma.ServiceUpdateManyMutationInput;
      eventStatus: 'success' | 'failed';
    },
  ): Promise<boolean> =>
    db.$transaction(async (tx) => {
      const done = await tx.deployment.updateMany({
        where: { id: outcome.deploymentId, status: { in: change.from } },
        data: change.deployment,
      });
      if (done.count === 0) return false;
      const { createdAt } = await tx.deployment.findUniqueOrThrow({
        where: { id: outcome.deploymentId },
        select: { createdAt: true },
      });
      await tx.service.updateMany({
        where: {
          id: outcome.serviceId,
          deletedAt: null,
          ...noNewerInFlight(outcome.deploymentId, createdAt),
        },
        data: change.service,
      });
      await tx.serviceEvent.create({
        data: {
          serviceId: outcome.serviceId,
          type: outcome.trigger === 'redeploy' ? 'redeploy' : 'deploy',
          status: change.eventStatus,
          message: outcome.message,
        },
      });
      return true;
    });

  return {
    async findById(id: string): Promise<WorkerDeployment | null> {
      const row = await db.deployment.findUnique({ where: { id } });
      return row ? toDeployment(row) : null;
    },

    /** True when the service has a deployment requested after this one that has not been cancelled. */
    async hasNewer(deployment: Pick<WorkerDeployment, 'id' | 'serviceId' | 'createdAt'>): Promise<boolean> {
      const found = await db.deployment.findFirst({
        where: {
          serviceId: deployment.serviceId,
          id: { not: deployment.id },
          createdAt: { gt: deployment.createdAt },
          status: { not: 'cancelled' },
        },
        select: { id: true },
      });
      return found !== null;
    },

    /** queued → running (a retry finds it running already). False when it reached another state. */
    async claim(id: string): Promise<boolean> {
      const claimed = await db.deployment.updateMany({
        where: { id, status: { in: IN_FLIGHT } },
        data: { status: 'running', error: null },
      });
      if (claimed.count === 0) return false;
      await db.deployment.updateMany({ where: { id, startedAt: null }, data: { startedAt: new Date() } });
      return true;
    },

    async setStep(id: string, step: string): Promise<void> {
      await db.deployment.updateMany({ where: { id, status: 'running' }, data: { step } });
    },

    async savePlan(id: string, plan: unknown, imageDigest?: string): Promise<void> {
      await db.deployment.update({
        where: { id },
        data: { plan: plan as InputJsonValue, ...(imageDigest ? { imageDigest } : {}) },
      });
    },

    /** The commit a git/ai deployment checked out (a redeploy records the branch's new head). */
    async recordCommit(id: string, commit: string): Promise<void> {
      await db.deployment.update({ where: { id }, data: { commit } });
    },

    async currentStatus(id: string): Promise<DeploymentStatus | null> {
      const row = await db.deployment.findUnique({ where: { id }, select: { status: true } });
      return row?.status ?? null;
    },

    /** Next free log sequence number: a retried job appends after what earlier attempts wrote. */
    async nextLogSeq(deploymentId: string): Promise<number> {
      const last = await db.deploymentLog.aggregate({ where: { deploymentId }, _max: { seq: true } });
      return (last._max.seq ?? 0) + 1;
    },

    async appendLog(deploymentId: string, seq: number, stream: string, message: string): Promise<void> {
      await db.deploymentLog.create({ data: { deploymentId, seq, stream, message } });
    },

    async markSucceeded(
      outcome: DeploymentOutcome & { compose?: string; memoryLimitMb: number; cpuLimit: number },
    ): Promise<boolean> {
      const now = new Date();
      return finish(outcome, {
        from: ['running'],
        deployment: { status: 'succeeded', step: null, finishedAt: now },
        service: {
          status: 'running',
          deployedAt: now,
          ...(outcome.compose !== undefined ? { compose: outcome.compose } : {}),
          memoryLimitMb: outcome.memoryLimitMb,
          cpuLimit: outcome.cpuLimit,
        },
        eventStatus: 'success',
      });
    },

    /** Records a final failure: deployment failed, service failed (unless a newer deploy is coming), one event. */
    async markFailed(outcome: DeploymentOutcome & { step: string | null }): Promise<boolean> {
      return finish(outcome, {
        from: IN_FLIGHT,
        deployment: {
          status: 'failed',
          error: outcome.message,
          finishedAt: new Date(),
          ...(outcome.step ? { step: outcome.step } : {}),
        },
        service: { status: 'failed' },
        eventStatus: 'failed',
      });
    },

    /**
     * An interrupted deployment that a newer request replaced: it is not resumed, and its log and
     * the service timeline say which deployment replaced it (the user asked for both).
     */
    async markSuperseded(
      deployment: Pick<WorkerDeployment, 'id' | 'serviceId' | 'trigger' | 'createdAt'>,
    ): Promise<boolean> {
      return db.$transaction(async (tx) => {
        const done = await tx.deployment.updateMany({
          where: { id: deployment.id, status: { in: IN_FLIGHT } },
          data: { status: 'superseded', finishedAt: new Date() },
        });
        if (done.count === 0) return false;
        const newer = await tx.deployment.findFirst({
          where: { serviceId: deployment.serviceId, createdAt: { gt: deployment.createdAt } },
          orderBy: { createdAt: 'desc' },
          select: { id: true },
        });
        const message = `Deployment ${deployment.id} superseded by the newer deployment ${newer?.id ?? 'requested since'}; it was not completed`;
        await tx.serviceEvent.create({
          data: {
            serviceId: deployment.serviceId,
            type: deployment.trigger === 'redeploy' ? 'redeploy' : 'deploy',
            status: 'info',
            message,
          },
        });
        const last = await tx.deploymentLog.aggregate({
          where: { deploymentId: deployment.id },
          _max: { seq: true },
        });
        await tx.deploymentLog.create({
          data: { deploymentId: deployment.id, seq: (last._max.seq ?? 0) + 1, stream: 'stdout', message },
        });
        return true;
      });
    },

    /** Called on delete: nothing of this service may run after it. */
    async cancelInFlight(serviceId: string): Promise<number> {
      const result = await db.deployment.updateMany({
        where: { serviceId, status: { in: IN_FLIGHT } },
        data: { status: 'cancelled', finishedAt: new Date() },
      });
      return result.count;
    },

    async lastSucceeded(serviceId: string): Promise<WorkerDeployment | null> {
      const row = await db.deployment.findFirst({
        where: { serviceId, status: 'succeeded' },
        orderBy: { createdAt: 'desc' },
      });
      return row ? toDeployment(row) : null;
    },

    /** For the reconciler: queued ones older than `queuedBefore`, and every running one. */
    async listUnfinished(queuedBefore: Date): Promise<{ id: string; status: DeploymentStatus }[]> {
      return db.deployment.findMany({
        where: { OR: [{ status: 'queued', createdAt: { lt: queuedBefore } }, { status: 'running' }] },
        select: { id: true, status: true },
        orderBy: { createdAt: 'asc' },
        take: 500,
      });
    },
  };
}

export type WorkerDeploymentStore = ReturnType<typeof createWorkerDeploymentStore>;
