import { randomUUID } from 'node:crypto';
import type { Db } from '../client.js';
import type { WebhookDelivery } from '../generated/client.ts';
import { isUniqueViolation } from '../errors.js';
import { CAP_TRANSACTION, lockCountCap } from './count-cap-lock.js';
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
  /** The provider sent this delivery id before and it deployed: nothing new is queued. */
  | { kind: 'duplicate'; deploymentId: string };

/** Deliveries kept per service: the newest; a provider's retries happen within hours, not weeks. */
export const DELIVERIES_KEPT_PER_SERVICE = 200;

export function createWebhooksStore(db: Db) {
  const prune = async (serviceId: string): Promise<void> => {
    await db.$executeRaw`
      DELETE FROM webhook_deliveries WHERE id IN (
        SELECT id FROM webhook_deliveries WHERE service_id = ${serviceId}
        ORDER BY received_at DESC, id DESC OFFSET ${DELIVERIES_KEPT_PER_SERVICE})`;
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

    /** Creates the service's hook, or replaces it: the old id (URL and secret) stops working at once. */
    async replace(serviceId: string): Promise<{ id: string; createdAt: Date; rotated: boolean }> {
      // Serialised per service: two racing rotations both deleted nothing and collided on the
      // unique service_id (a 500); under the lock each one replaces the previous one's hook.
      return db.$transaction(async (tx) => {
        await lockCountCap(tx, 'serviceWebhook', serviceId);
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
      await prune(delivery.serviceId);
    },

    /**
     * Queues the redeploy of `commit` through the redeploy's own transaction (service lock,
     * supersede, coalescing) and records the delivery in the same transaction. A redelivery of a
     * delivery id that already deployed finds that record under the service lock and queues
     * nothing; the partial unique index settles two copies racing on different replicas.
     */
    async deployPinned(
      delivery: Omit<NewWebhookDelivery, 'outcome' | 'deploymentId' | 'commit' | 'statusCode'> & {
        commit: string;
      },
    ): Promise<PinnedDeployResult> {
      const attempt = () =>
        db.$transaction(async (tx): Promise<PinnedDeployResult> => {
          await tx.$queryRaw`SELECT id FROM services WHERE id = ${delivery.serviceId} FOR UPDATE`;
          if (delivery.providerDeliveryId !== null) {
            const earlier = await tx.webhookDelivery.findFirst({
              where: {
                serviceId: delivery.serviceId,
                provider: delivery.provider,
                providerDeliveryId: delivery.providerDeliveryId,
                outcome: 'deployed',
              },
              select: { deploymentId: true },
            });
            if (earlier?.deploymentId) return { kind: 'duplicate', deploymentId: earlier.deploymentId };
          }
          const { deployment, coalesced } = await queueRedeploy(tx, delivery.serviceId, delivery.commit);
          await tx.webhookDelivery.create({
            data: { ...delivery, outcome: 'deployed', statusCode: 202, deploymentId: deployment.id },
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
      await prune(delivery.serviceId);
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
