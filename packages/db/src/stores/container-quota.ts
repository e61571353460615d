import { DomainError } from '@hostctl/domain';
import type { Db } from '../client.js';
import type { Tx } from './release-rollback.js';

/**
 * The per-customer container cap (CUSTOMER_MAX_CONTAINERS): what a service's definition runs,
 * summed over the customer's live services. Checked and written in one transaction under a
 * per-customer advisory lock, so parallel creates of one customer are counted one after the other
 * (a count-then-insert let each see the same old total). The two-key form keeps this lock out of
 * the one-key space of the worker's service locks.
 */
export interface ContainerClaim {
  customerId: string;
  /** What the new or changed definition runs. */
  containers: number;
  customerMax: number;
}

/** Locks the customer's count for the rest of `tx`; the containers of its other live services. */
async function lockAndCount(tx: Tx, customerId: string, exceptServiceId: string): Promise<number> {
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext('customer-containers'), hashtext(${customerId}))`;
  const rows = await tx.$queryRaw<{ used: number }[]>`
    SELECT coalesce(sum(containers), 0)::int AS used FROM services
    WHERE customer_id = ${customerId} AND deleted_at IS NULL AND id <> ${exceptServiceId}`;
  return rows[0]?.used ?? 0;
}

export function customerCapMessage(used: number, claim: Pick<ContainerClaim, 'containers' | 'customerMax'>) {
  return `this would bring the customer to ${used + claim.containers} containers; at most ${claim.customerMax} per customer (CUSTOMER_MAX_CONTAINERS), ${used} are taken by its other services`;
}

/** The API's create and PATCH: 409 naming the limit, in the caller's transaction. */
export async function claimContainers(tx: Tx, claim: ContainerClaim, serviceId = ''): Promise<void> {
  const used = await lockAndCount(tx, claim.customerId, serviceId);
  if (used + claim.containers <= claim.customerMax) return;
  const message = customerCapMessage(used, claim);
  throw new DomainError('conflict', message, { errors: [{ path: '/body', message }] });
}

/**
 * The worker's deploy, once the plan is known (git/ai learn it from the repository; a rollback
 * brings an older one): records what the service now runs, or answers the containers its
 * customer's other services take when it would not fit, leaving the record unchanged.
 */
export async function recordServiceContainers(
  db: Db,
  serviceId: string,
  containers: number,
  customerMax: number,
): Promise<{ fits: true } | { fits: false; used: number }> {
  return db.$transaction(async (tx) => {
    const service = await tx.service.findUniqueOrThrow({
      where: { id: serviceId },
      select: { customerId: true },
    });
    const used = await lockAndCount(tx, service.customerId, serviceId);
    if (used + containers > customerMax) return { fits: false, used };
    await tx.service.update({ where: { id: serviceId }, data: { containers } });
    return { fits: true };
  });
}
