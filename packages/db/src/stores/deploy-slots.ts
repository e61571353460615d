import type { DeploymentStatus } from '@hostctl/domain';
import type { Db } from '../client.js';
import { isAtBuildQuota } from './build-quota.js';
import { CAP_TRANSACTION, lockCountCap } from './count-cap-lock.js';

const IN_FLIGHT: readonly DeploymentStatus[] = ['queued', 'running'];

/**
 * Marks the deployment running, unless its customer already runs `share` deployments across
 * every worker, or the deployment builds and the customer already runs its `concurrent_builds`
 * ('customer_busy': the job steps aside so that other customers' deployments get the slot;
 * docs/quotas.md#fair-queues). A deployment already running (a retried or stalled job) holds
 * its slot and is claimed again. Counted under the customer's lock, so parallel claims of one
 * customer never pass the share together.
 */
export async function claimDeploymentSlot(
  db: Db,
  id: string,
  share: number,
): Promise<'claimed' | 'unclaimed' | 'customer_busy'> {
  return db.$transaction(async (tx) => {
    // The service row's key-share lock waits for a request that is joining this deployment while
    // it is queued (queueRedeploy holds the row FOR UPDATE): the run then reads that request's
    // definition, or, claimed first, the request queues a new deployment instead of joining.
    const rows = await tx.$queryRaw<{ customerId: string; status: DeploymentStatus }[]>`
      SELECT s.customer_id AS "customerId", d.status::text AS status
      FROM deployments d JOIN services s ON s.id = d.service_id WHERE d.id = ${id}
      FOR KEY SHARE OF s`;
    const row = rows[0];
    if (!row || !IN_FLIGHT.includes(row.status)) return 'unclaimed';
    if (row.status === 'queued') {
      await lockCountCap(tx, 'deploySlots', row.customerId);
      if ((await runningOfCustomer(tx, id)) >= share) return 'customer_busy';
      // A build past the customer's concurrent_builds waits the same way (build-quota.ts).
      if (await isAtBuildQuota(tx, id)) return 'customer_busy';
    }
    const claimed = await tx.deployment.updateMany({
      where: { id, status: { in: [...IN_FLIGHT] } },
      data: { status: 'running', error: null },
    });
    if (claimed.count === 0) return 'unclaimed';
    await tx.deployment.updateMany({ where: { id, startedAt: null }, data: { startedAt: new Date() } });
    return 'claimed';
  }, CAP_TRANSACTION);
}

/**
 * Whether the deployment's customer already runs `share` deployments (or the deployment builds and
 * the customer runs its `concurrent_builds`), read without the lock: a hint that lets the job of a
 * customer at its share step aside before the heavier service read, service lock and claim (under a flood its jobs come back here once a second each). Only
 * claimDeploymentSlot decides; a hint that is out of date costs one more pass.
 */
export async function isCustomerAtShare(db: Db, id: string, share: number): Promise<boolean> {
  return (await runningOfCustomer(db, id)) >= share || (await isAtBuildQuota(db, id));
}

/** Running deployments, across every worker, of the customer whose service deployment `id` deploys. */
async function runningOfCustomer(q: Pick<Db, '$queryRaw'>, id: string): Promise<number> {
  const rows = await q.$queryRaw<{ count: number }[]>`
    SELECT count(*)::int AS count FROM deployments d JOIN services s ON s.id = d.service_id
    WHERE d.status = 'running' AND s.customer_id = (
      SELECT o.customer_id FROM deployments q JOIN services o ON o.id = q.service_id WHERE q.id = ${id})`;
  return rows[0]?.count ?? 0;
}
