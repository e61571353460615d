import { randomUUID } from 'node:crypto';
import { quotaExceeded } from '@hostctl/domain';
import type { Db } from '../client.js';
import type { WebhookDelivery } from '../generated/client.ts';
import { isUniqueViolation } from '../errors.js';
import { CAP_TRANSACTION } from './count-cap-lock.js';
import { customerWebhooks } from './quota-counts.js';
import { customerLimits, customerOfService, lockCustomerQuota } from './quota-ledger.js';
import { queueRedeploy } from './services.store.js';

export type WebhooksStore = ReturnType<typeof createWebhooksStore>;

/** What the public receiver needs to know about a hook: nothing of it is shown to the sender. */
export interface HookTarget {
  hookId: string;
  serviceId: string;
  customerId: string;
  deployMethod: string;
  gitBranch: string | null;
}

/** A body whose signature held, by its SHA-256: what deduplication is keyed on. */
export interface SignedBody {
  serviceId: string;
  hookId: string;
  bodyDigest: string;
}

export type DeliveryOutcome = 'deployed' | 'ignored' | 'rejected';

export interface NewWebhookDelivery {
  serviceId: string;
  hookId: string;
  provider: string;
  event: string | null;
  providerDeliveryId: string | null;
  branch: string | null;
  commit: string | null;
  outcome: DeliveryOutcome;
  statusCode: number;
  reason: string | null;
  deploymentId: string | null;
  sourceAddress: string;
}

export type PinnedDeployResult =
  | { kind: 'queued'; deploymentId: string; coalesced: boolean }
  /** The same signed body arrived before (whatever its delivery id or forge label): nothing is queued. */
  | { kind: 'duplicate'; deploymentId: string | null }
  /** The owner stopped the service: a push never starts it. */
  | { kind: 'stopped' };

/**
 * Deliveries kept per service in the log: the newest accepted ones and, counted apart, the newest
 * rejected ones, so a flood of unsigned posts cannot push the record of real deliveries out.
 */
export const DELIVERIES_KEPT_PER_SERVICE = 200;
const REJECTED_KEPT_PER_SERVICE = 50;
/**
 * Digests of signed bodies kept per service. Only the forge can add one (a replay adds nothing),
 * so evicting one takes this many real pushes; an old body replayed after that is still refused
 * by the worker's forward-only rule (docs/webhooks.md).
 */
export const SIGNED_DIGESTS_KEPT_PER_SERVICE = 1000;

export function createWebhooksStore(db: Db) {
  const prune = async (serviceId: string, outcome: DeliveryOutcome): Promise<void> => {
    if (outcome === 'rejected') {
      await db.$executeRaw`
        DELETE FROM webhook_deliveries WHERE id IN (
          SELECT id FROM webhook_deliveries WHERE service_id = ${serviceId} AND outcome = 'rejected'
          ORDER BY received_at DESC, id DESC OFFSET ${REJECTED_KEPT_PER_SERVICE})`;
      return;
    }
    await db.$executeRaw`
      DELETE FROM webhook_deliveries WHERE id IN (
        SELECT id FROM webhook_deliveries WHERE service_id = ${serviceId} AND outcome <> 'rejected'
        ORDER BY received_at DESC, id DESC OFFSET ${DELIVERIES_KEPT_PER_SERVICE})`;
  };
  const pruneDigests = async (serviceId: string): Promise<void> => {
    await db.$executeRaw`
      DELETE FROM webhook_signed_deliveries WHERE (service_id, body_digest) IN (
        SELECT service_id, body_digest FROM webhook_signed_deliveries WHERE service_id = ${serviceId}
        ORDER BY received_at DESC, body_digest DESC OFFSET ${SIGNED_DIGESTS_KEPT_PER_SERVICE})`;
  };

  return {
    /** The hook by its URL id, if its service still exists. Unscoped: the id itself is the credential. */
    async findTarget(hookId: string): Promise<HookTarget | null> {
      const row = await db.serviceWebhook.findFirst({
        where: { id: hookId, service: { deletedAt: null } },
        select: {
          id: true,
          service: { select: { id: true, customerId: true, deployMethod: true, gitBranch: true } },
        },
      });
      if (!row) return null;
      const { service } = row;
      return {
        hookId: row.id,
        serviceId: service.id,
        customerId: service.customerId,
        deployMethod: service.deployMethod,
        gitBranch: service.gitBranch,
      };
    },

    async hookOf(serviceId: string): Promise<{ id: string; createdAt: Date } | null> {
      return db.serviceWebhook.findUnique({ where: { serviceId }, select: { id: true, createdAt: true } });
    },

    /**
     * Creates the service's hook, or replaces it: the old id (URL and secret) stops working at once.
     * A new hook counts against its customer's `webhooks` quota (quota_exceeded); a rotation adds
     * nothing and always passes.
     */
    async replace(serviceId: string): Promise<{ id: string; createdAt: Date; rotated: boolean }> {
      // Serialised per customer, under its quota lock: two racing rotations both deleted nothing and
      // collided on the unique service_id (a 500), and two new hooks could both pass the count.
      return db.$transaction(async (tx) => {
        const customerId = await customerOfService(tx, serviceId);
        if (customerId === null) throw new Error(`service ${serviceId} vanished before its webhook`);
        const limit = (await customerLimits(tx, customerId)).webhooks;
        await lockCustomerQuota(tx, customerId);
        const existing = await tx.serviceWebhook.count({ where: { serviceId } });
        if (existing === 0 && limit !== null) {
          const hooks = await customerWebhooks(tx, customerId);
          if (hooks + 1 > limit)
            throw quotaExceeded({
              name: 'webhooks',
              limit,
              usage: hooks,
              requested: 1,
              customer_id: customerId,
            });
        }
        const removed = await tx.serviceWebhook.deleteMany({ where: { serviceId } });
        const hook = await tx.serviceWebhook.create({ data: { id: randomUUID(), serviceId } });
        return { id: hook.id, createdAt: hook.createdAt, rotated: removed.count > 0 };
      }, CAP_TRANSACTION);
    },

    async remove(serviceId: string): Promise<boolean> {
      const removed = await db.serviceWebhook.deleteMany({ where: { serviceId } });
      return removed.count > 0;
    },

    async record(delivery: NewWebhookDelivery): Promise<void> {
      await db.webhookDelivery.create({ data: delivery });
      await prune(delivery.serviceId, delivery.outcome);
    },

    /**
     * Notes a signed body the service received, for a delivery that deploys nothing; false (and
     * the deployment the first one queued, if any) when the same body came before. Call only once
     * the signature held: nothing unsigned may take or evict a place here.
     */
    async claimSigned(
      signed: SignedBody,
    ): Promise<{ isNew: true } | { isNew: false; deploymentId: string | null }> {
      const inserted = await db.$executeRaw`
        INSERT INTO webhook_signed_deliveries (service_id, body_digest, hook_id)
        VALUES (${signed.serviceId}, ${signed.bodyDigest}, ${signed.hookId})
        ON CONFLICT DO NOTHING`;
      if (inserted > 0) {
        await pruneDigests(signed.serviceId);
        return { isNew: true };
      }
      const earlier = await db.webhookSignedDelivery.findUnique({
        where: { serviceId_bodyDigest: { serviceId: signed.serviceId, bodyDigest: signed.bodyDigest } },
        select: { deploymentId: true },
      });
      return { isNew: false, deploymentId: earlier?.deploymentId ?? null };
    },

    /**
     * Queues the redeploy of `commit` through the redeploy's own transaction (service lock,
     * supersede, coalescing), and in the same transaction claims the signed body's digest and
     * records the delivery. Under the service lock: a body received before is a duplicate (two
     * copies racing on two replicas meet on the digest's primary key), and a stopped service
     * queues nothing.
     */
    async deployPinned(
      delivery: Omit<NewWebhookDelivery, 'outcome' | 'deploymentId' | 'commit' | 'statusCode'> & {
        commit: string;
        bodyDigest: string;
      },
    ): Promise<PinnedDeployResult> {
      const { bodyDigest, ...recorded } = delivery;
      const key = { serviceId: delivery.serviceId, bodyDigest };
      const attempt = () =>
        db.$transaction(async (tx): Promise<PinnedDeployResult> => {
          const [service] = await tx.$queryRaw<{ status: string }[]>`
            SELECT status::text AS status FROM services WHERE id = ${delivery.serviceId} FOR UPDATE`;
          const claimed = await tx.$executeRaw`
            INSERT INTO webhook_signed_deliveries (service_id, body_digest, hook_id)
            VALUES (${delivery.serviceId}, ${bodyDigest}, ${delivery.hookId})
            ON CONFLICT DO NOTHING`;
          if (claimed === 0) {
            const earlier = await tx.webhookSignedDelivery.findUnique({
              where: { serviceId_bodyDigest: key },
              select: { deploymentId: true },
            });
            return { kind: 'duplicate', deploymentId: earlier?.deploymentId ?? null };
          }
          if (service?.status === 'stopped') return { kind: 'stopped' };
          const { deployment, coalesced } = await queueRedeploy(tx, delivery.serviceId, delivery.commit);
          await tx.webhookSignedDelivery.update({
            where: { serviceId_bodyDigest: key },
            data: { deploymentId: deployment.id },
          });
          await tx.webhookDelivery.create({
            data: { ...recorded, outcome: 'deployed', statusCode: 202, deploymentId: deployment.id },
          });
          return { kind: 'queued', deploymentId: deployment.id, coalesced };
        });
      let result: PinnedDeployResult;
      try {
        result = await attempt();
      } catch (error) {
        if (!isUniqueViolation(error)) throw error;
        result = await attempt();
      }
      await prune(delivery.serviceId, 'deployed');
      await pruneDigests(delivery.serviceId);
      return result;
    },

    async listDeliveries(
      serviceId: string,
      page: { page: number; perPage: number },
    ): Promise<{ rows: WebhookDelivery[]; total: number }> {
      const [rows, total] = await Promise.all([
        db.webhookDelivery.findMany({
          where: { serviceId },
          orderBy: [{ receivedAt: 'desc' }, { id: 'desc' }],
          skip: (page.page - 1) * page.perPage,
          take: page.perPage,
        }),
        db.webhookDelivery.count({ where: { serviceId } }),
      ]);
      return { rows, total };
    },

    async lastDelivery(serviceId: string): Promise<WebhookDelivery | null> {
      return db.webhookDelivery.findFirst({
        where: { serviceId },
        orderBy: [{ receivedAt: 'desc' }, { id: 'desc' }],
      });
    },
  };
}
