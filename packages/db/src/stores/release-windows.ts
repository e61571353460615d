import type { Db } from '../client.js';

/**
 * A deployment's release window (stabilise, drain) as the worker's continuations keep it
 * (docs/deployments.md#continuations): `window_started_at` is set when a window begins and
 * cleared when the deployment is settled; meanwhile its job owns the service even while it waits
 * in the delayed set without the service lock.
 */
export function releaseWindowsOf(db: Db) {
  return {
    /**
     * setStep for a window step: also records when the window began, so a run that resumes it (a
     * continuation, a retry) ends it on time. Conditional on `running`, as setStep.
     */
    async enterWindow(id: string, step: string, startedAt: Date): Promise<boolean> {
      const done = await db.deployment.updateMany({
        where: { id, status: 'running' },
        data: { step, windowStartedAt: startedAt },
      });
      return done.count > 0;
    },

    /**
     * Whether another deployment of the service is in its window: even cancelled, its job still
     * has to put the previous release back, so other jobs of the service wait. Only running and
     * cancelled ones count: a deployment settled otherwise with its window still marked was
     * settled by code that does not know windows (the previous release's worker during a rolling
     * upgrade, docs/operations.md#upgrading), and would keep the service waiting forever.
     */
    async otherInWindow(serviceId: string, exceptDeploymentId?: string): Promise<boolean> {
      const found = await db.deployment.findFirst({
        where: {
          serviceId,
          windowStartedAt: { not: null },
          status: { in: ['running', 'cancelled'] },
          ...(exceptDeploymentId ? { id: { not: exceptDeploymentId } } : {}),
        },
        select: { id: true },
      });
      return found !== null;
    },

    /** Settled without its job's undo (its service was deleted meanwhile): the service is free. */
    async leaveWindow(id: string): Promise<void> {
      await db.deployment.updateMany({ where: { id }, data: { windowStartedAt: null } });
    },
  };
}
