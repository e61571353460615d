import { deploymentEventType, type DeploymentStatus } from '@hostctl/domain';
import type { Db } from '../client.js';
import type { InputJsonValue } from '../generated/internal/prismaNamespace.ts';
import { alignWithRelease } from './release-definition.js';
import { recordServiceClaim, type CapacityClaim } from './quota-ledger.js';
import { claimDeploymentSlot, isCustomerAtShare } from './deploy-slots.js';
import { checkBuildMinutes, recordBuildTime } from './build-quota.js';
import { releaseWindowsOf } from './release-windows.js';
import { toWorkerDeployment as toDeployment } from './worker-deployment-row.js';
import { finishDeployment, IN_FLIGHT, noNewerInFlight } from './deployment-finish.js';
import type {
  DeploymentOutcome,
  DeploymentRecord,
  DeploymentTrigger,
  WorkerDeployment,
} from './worker-deployments.types.js';

export type { DeploymentOutcome, DeploymentRecord, DeploymentTrigger, WorkerDeployment };

/**
 * The worker's reads and writes of deployments. Every transition is a conditional update on the
 * current status, so a retried or duplicated job can never move a finished deployment again.
 */
export function createWorkerDeploymentStore(db: Db) {
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
    /** Marks the deployment running within its customer's share (deploy-slots.ts). */
    claim: (id: string, share: number) => claimDeploymentSlot(db, id, share),
    /** A hint, without the lock, that the claim would answer customer_busy (deploy-slots.ts). */
    isCustomerAtShare: (id: string, share: number) => isCustomerAtShare(db, id, share),

    /**
     * Conditional on `running`: false means the deployment was cancelled (or finished) meanwhile,
     * so a step that loses this race must not run (the API refuses a cancel once step is retire).
     */
    async setStep(id: string, step: string): Promise<boolean> {
      const done = await db.deployment.updateMany({ where: { id, status: 'running' }, data: { step } });
      return done.count > 0;
    },

    ...releaseWindowsOf(db),

    async record(id: string, what: DeploymentRecord): Promise<void> {
      await db.deployment.update({
        where: { id },
        data: {
          ...(what.sourceCompose !== undefined ? { sourceCompose: what.sourceCompose } : {}),
          ...(what.sourceVariables !== undefined ? { sourceVariables: what.sourceVariables } : {}),
          ...(what.sourceSecretNames !== undefined ? { sourceSecretNames: what.sourceSecretNames } : {}),
          ...(what.sourceVariablesVersion !== undefined
            ? { sourceVariablesVersion: what.sourceVariablesVersion }
            : {}),
          ...(what.sourceVariableGroups ? { sourceVariableGroups: what.sourceVariableGroups } : {}),
          ...(what.imageDigests !== undefined ? { imageDigests: what.imageDigests } : {}),
          ...(what.updateOrder !== undefined ? { updateOrder: what.updateOrder } : {}),
          ...(what.warnings !== undefined ? { warnings: what.warnings } : {}),
        },
      });
    },

    /** build_minutes_per_day asked again before a build starts (build-quota.ts). */
    checkBuildMinutes: (serviceId: string) => checkBuildMinutes(db, serviceId),
    /** The build step ended, succeeded or failed: its time counts against build_minutes_per_day. */
    recordBuildTime: (id: string, ms: number) => recordBuildTime(db, id, ms),

    /** The customer's quotas at deploy time (quota-ledger.ts): records the plan's claim or refuses. */
    recordClaim: (serviceId: string, claim: CapacityClaim) => recordServiceClaim(db, serviceId, claim),

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
      outcome: DeploymentOutcome & {
        compose?: string;
        /** A rollback gives the service the variables of the release it ran (docs/deployments.md). */
        variables?: Record<string, string>;
        /** …and which of them are secret (the marks go back with the values). */
        secretNames?: Record<string, string>;
        /** The version of the variables it ran (null: not recorded; written back regardless). */
        variablesVersion?: number | null;
        memoryLimitMb: number;
        cpuLimit: number;
      },
    ): Promise<boolean> {
      const now = new Date();
      return finishDeployment(db, outcome, {
        from: ['running'],
        deployment: { status: 'succeeded', step: null, finishedAt: now },
        service: {
          status: 'running',
          deployedAt: now,
          ...(outcome.compose !== undefined ? { compose: outcome.compose } : {}),
          memoryLimitMb: outcome.memoryLimitMb,
          cpuLimit: outcome.cpuLimit,
        },
        ...(outcome.variables !== undefined
          ? {
              variables: {
                data: {
                  variables: outcome.variables,
                  ...(outcome.secretNames !== undefined ? { secretNames: outcome.secretNames } : {}),
                },
                version: outcome.variablesVersion ?? null,
              },
            }
          : {}),
        eventStatus: 'success',
      });
    },

    /**
     * Records a final failure: deployment failed, one event, and the service `running` when a
     * previous release still serves (`keptRelease`), else `failed` (unless a newer deploy is coming).
     */
    async markFailed(
      outcome: DeploymentOutcome & { step: string | null; keptRelease?: string; error?: string },
    ): Promise<boolean> {
      return finishDeployment(db, outcome, {
        from: IN_FLIGHT,
        deployment: {
          status: 'failed',
          error: outcome.error ?? outcome.message,
          finishedAt: new Date(),
          ...(outcome.step ? { step: outcome.step } : {}),
        },
        service: { status: outcome.keptRelease ? 'running' : 'failed' },
        eventStatus: 'failed',
        alignDefinition: true,
      });
    },

    /** The new release failed after the switch: traffic went back to the previous one, still running. */
    async markRolledBack(
      outcome: DeploymentOutcome & { step: string | null; error: string },
    ): Promise<boolean> {
      return finishDeployment(db, outcome, {
        from: ['running'],
        deployment: {
          status: 'rolled_back',
          error: outcome.error,
          finishedAt: new Date(),
          ...(outcome.step ? { step: outcome.step } : {}),
        },
        service: { status: 'running' },
        eventStatus: 'rolled_back',
        alignDefinition: true,
      });
    },

    /**
     * After the worker cleaned up a cancelled deployment: the service shows what serves now, with
     * that release's variables and compose. The API wrote the event; a deleted service or one with
     * a newer deployment coming is left alone.
     */
    async settleCancelled(
      deploymentId: string,
      serviceId: string,
      status: 'running' | 'failed',
    ): Promise<boolean> {
      return db.$transaction(async (tx) => {
        const row = await tx.deployment.findFirst({
          where: { id: deploymentId, status: 'cancelled' },
          select: { createdAt: true },
        });
        if (!row) return false;
        await tx.deployment.update({ where: { id: deploymentId }, data: { windowStartedAt: null } });
        const done = await tx.service.updateMany({
          where: {
            id: serviceId,
            deletedAt: null,
            status: 'deploying',
            ...noNewerInFlight(deploymentId, row.createdAt),
          },
          data: { status },
        });
        const isLatest = await tx.service.count({
          where: { id: serviceId, deletedAt: null, ...noNewerInFlight(deploymentId, row.createdAt) },
        });
        if (isLatest > 0) await alignWithRelease(tx, serviceId);
        return done.count > 0;
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
          data: { status: 'superseded', finishedAt: new Date(), windowStartedAt: null },
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
            type: deploymentEventType(deployment.trigger),
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

    /** Ids of the service's queued or running deployments (their container sets are not strays). */
    async inFlightIds(serviceId: string): Promise<string[]> {
      const rows = await db.deployment.findMany({
        where: { serviceId, status: { in: IN_FLIGHT } },
        select: { id: true },
      });
      return rows.map((row) => row.id);
    },

    /** Every deployment of a service (what the registry holds is tagged by deployment). */
    async allIds(serviceId: string): Promise<string[]> {
      const rows = await db.deployment.findMany({ where: { serviceId }, select: { id: true } });
      return rows.map((row) => row.id);
    },

    /** Succeeded deployments of a service, newest first (releases: retention, rollback). */
    async succeededReleases(serviceId: string, take = 100): Promise<WorkerDeployment[]> {
      const rows = await db.deployment.findMany({
        where: { serviceId, status: 'succeeded' },
        orderBy: { createdAt: 'desc' },
        take,
      });
      return rows.map(toDeployment);
    },

    /**
     * For the reconciler: queued ones older than `queuedBefore`, every running one, and every one
     * still in its release window (a cancel there still needs its job to put the previous back).
     */
    async listUnfinished(queuedBefore: Date): Promise<{ id: string; status: DeploymentStatus }[]> {
      return db.deployment.findMany({
        where: {
          OR: [
            { status: 'queued', createdAt: { lt: queuedBefore } },
            { status: 'running' },
            { windowStartedAt: { not: null } },
          ],
        },
        select: { id: true, status: true },
        orderBy: { createdAt: 'asc' },
        take: 500,
      });
    },
  };
}

export type WorkerDeploymentStore = ReturnType<typeof createWorkerDeploymentStore>;
