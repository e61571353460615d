import { isDomainError, isRepositoryMethod, quotaExceeded, type DeployMethod } from '@hostctl/domain';
import type { Db } from '../client.js';
import { buildMinutesByCustomer, buildsRunningByCustomer } from './quota-counts.js';
import { customerLimits } from './quota-ledger.js';
import type { Tx } from './release-rollback.js';

/**
 * The build quotas (docs/quotas.md#builds). A build is the source and build steps of a git/ai
 * deployment that is not a rollback (a rollback runs images built before):
 *
 * - `concurrent_builds` counts the customer's running deployments that build and have not passed
 *   their build yet (step unset, `source` or `build`). It is not refused at the API: the worker's
 *   claim answers customer_busy past it (deploy-slots.ts) and the job waits in the delayed set.
 * - `build_minutes_per_day` sums `build_ms` of the builds that ended in the last 24 hours (a
 *   rolling window), in minutes begun (rounded up). A build asks for at least one more minute, so
 *   a customer at or over its limit is refused a new build; a build in progress is never stopped.
 */

/**
 * A request that starts a build (create, redeploy, PATCH of a git/ai service), under the
 * customer's quota lock taken by the caller: refused when the customer has no build minute left.
 */
export async function claimBuild(tx: Tx, customerId: string, deployMethod: DeployMethod): Promise<void> {
  if (!isRepositoryMethod(deployMethod)) return;
  const limit = (await customerLimits(tx, customerId)).build_minutes_per_day;
  if (limit === null) return;
  const used = (await buildMinutesByCustomer(tx, [customerId])).get(customerId) ?? 0;
  if (used + 1 > limit)
    throw quotaExceeded({
      name: 'build_minutes_per_day',
      limit,
      usage: used,
      requested: 1,
      customer_id: customerId,
    });
}

/**
 * The worker asks again before the build: a deployment that waited in the queue while the
 * customer's other builds used up the minutes fails with the refusal's sentence.
 */
export async function checkBuildMinutes(
  db: Db,
  serviceId: string,
): Promise<{ fits: true } | { fits: false; message: string }> {
  const service = await db.service.findUnique({
    where: { id: serviceId },
    select: { customerId: true, deployMethod: true },
  });
  if (!service) return { fits: true };
  try {
    await db.$transaction((tx) => claimBuild(tx, service.customerId, service.deployMethod));
    return { fits: true };
  } catch (error) {
    if (isDomainError(error) && error.code === 'quota_exceeded')
      return { fits: false, message: error.message };
    throw error;
  }
}

/** The build step ended (succeeded or failed): its time counts, over every attempt of the deployment. */
export async function recordBuildTime(db: Db, deploymentId: string, ms: number): Promise<void> {
  await db.$executeRaw`
    UPDATE deployments SET build_ms = coalesce(build_ms, 0) + ${Math.round(ms)}, built_at = now()
    WHERE id = ${deploymentId}`;
}

/**
 * Whether the deployment builds and its customer already runs `concurrent_builds` builds: in the
 * claim's transaction under the customer's slot lock (deploy-slots.ts), or without it as the
 * step-aside hint.
 */
export async function isAtBuildQuota(db: Tx | Db, deploymentId: string): Promise<boolean> {
  const rows = await db.$queryRaw<{ customerId: string; builds: boolean }[]>`
    SELECT s.customer_id AS "customerId", s.deploy_method IN ('git', 'ai') AND d.trigger <> 'rollback' AS builds
    FROM deployments d JOIN services s ON s.id = d.service_id WHERE d.id = ${deploymentId}`;
  const row = rows[0];
  if (!row?.builds) return false;
  const limit = (await customerLimits(db, row.customerId)).concurrent_builds;
  if (limit === null) return false;
  return ((await buildsRunningByCustomer(db, [row.customerId])).get(row.customerId) ?? 0) >= limit;
}
