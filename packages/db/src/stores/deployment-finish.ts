import { deploymentEventType, type DeploymentStatus } from '@hostctl/domain';
import type { Db } from '../client.js';
import type { Prisma } from '../generated/client.ts';
import { insertNotifications } from './notification-outbox.js';
import { alignWithRelease } from './release-definition.js';
import type { DeploymentOutcome } from './worker-deployments.types.js';

export const IN_FLIGHT: DeploymentStatus[] = ['queued', 'running'];
const FINAL_STATUS_OF = { success: 'succeeded', failed: 'failed', rolled_back: 'rolled_back' } as const;

/** The service keeps the status a newer in-flight deployment gives it: the latest request wins. */
export const noNewerInFlight = (deploymentId: string, createdAt: Date) => ({
  deployments: {
    none: { id: { not: deploymentId }, createdAt: { gt: createdAt }, status: { in: IN_FLIGHT } },
  },
});

/**
 * Ends a deployment in one transaction: moves it out of `from` (a retried job finds it moved and
 * does nothing), updates the service unless a newer deployment is still coming, writes one event.
 */
export const finishDeployment = (
  db: Db,
  outcome: DeploymentOutcome,
  change: {
    from: DeploymentStatus[];
    deployment: Prisma.DeploymentUpdateManyMutationInput;
    service: Prisma.ServiceUpdateManyMutationInput;
    eventStatus: 'success' | 'failed' | 'rolled_back';
    /** The deployment did not go live: the service gets the running release's definition back. */
    alignDefinition?: boolean;
    /**
     * The variables (and marks) the deployment ran, given back to the service unless it still has
     * that version of them: rewriting equal values would count as a new version.
     */
    variables?: { data: Prisma.ServiceUpdateManyMutationInput; version: number | null };
  },
): Promise<boolean> =>
  db.$transaction(async (tx) => {
    const done = await tx.deployment.updateMany({
      where: { id: outcome.deploymentId, status: { in: change.from } },
      // Settled: the service is free for the jobs that waited for its window.
      data: { ...change.deployment, windowStartedAt: null },
    });
    if (done.count === 0) return false;
    const { createdAt } = await tx.deployment.findUniqueOrThrow({
      where: { id: outcome.deploymentId },
      select: { createdAt: true },
    });
    const updated = await tx.service.updateMany({
      where: {
        id: outcome.serviceId,
        deletedAt: null,
        ...noNewerInFlight(outcome.deploymentId, createdAt),
      },
      data: change.service,
    });
    // Only when no newer deployment is coming: that one's request owns the definition.
    if (change.alignDefinition && updated.count > 0) await alignWithRelease(tx, outcome.serviceId);
    if (change.variables && updated.count > 0) {
      const { data, version } = change.variables;
      await tx.service.updateMany({
        where: {
          id: outcome.serviceId,
          ...(version !== null ? { variablesVersion: { not: version } } : {}),
        },
        data,
      });
    }
    await tx.serviceEvent.create({
      data: {
        serviceId: outcome.serviceId,
        type: deploymentEventType(outcome.trigger),
        status: change.eventStatus,
        message: outcome.message,
      },
    });
    // The outbox row commits with the final state, or neither does (docs/notifications.md).
    const status = FINAL_STATUS_OF[change.eventStatus];
    const error = typeof change.deployment.error === 'string' ? change.deployment.error : null;
    await insertNotifications(tx, {
      event: `deployment.${status}`,
      serviceId: outcome.serviceId,
      deployment: { id: outcome.deploymentId, status, error },
      message: outcome.message,
    });
    return true;
  });
