import type { CustomerScope } from '@hostctl/auth-policy';
import type { Db, SqlPool } from '../client.js';
import type { AuditEvent } from '../generated/client.ts';
import { customerWhere } from './scope-where.js';

export type AuditStore = ReturnType<typeof createAuditStore>;

export type AuditTargetType =
  'service' | 'deployment' | 'run' | 'customer' | 'user' | 'api_key' | 'variable_group';

export interface NewAuditEvent {
  actorType: 'user' | 'api_key' | 'webhook' | 'anonymous';
  actorUserId: string | null;
  actorApiKeyId: string | null;
  /** actor_type webhook: the push hook's id (docs/webhooks.md). */
  actorWebhookId?: string | null;
  /** The caller's customer (null: unscoped or anonymous) and whether its scope is every customer. */
  actorCustomerId: string | null;
  actorSeesAll: boolean;
  method: string;
  route: string;
  action: string;
  targetType: AuditTargetType | null;
  targetId: string | null;
  statusCode: number;
  errorCode: string | null;
  /** What inside the target the request acted on (a revealed secret's name, never its value). */
  subject?: string | null;
  sourceAddress: string;
  requestId: string;
}

export interface AuditQuery {
  page: number;
  perPage: number;
  actorUserId?: string;
  actorApiKeyId?: string;
  actorWebhookId?: string;
  action?: string;
  targetType?: string;
  targetId?: string;
  since?: Date;
  until?: Date;
}

/**
 * Append-only: this store inserts and reads; the only delete is retention's, of rows older than
 * the cutoff (the table's trigger refuses any UPDATE and the deletion of rows younger than a day).
 */
export function createAuditStore(db: Db, sql: SqlPool) {
  return {
    /**
     * One statement: the event belongs to its target's customer when the caller could see that
     * customer, else to the caller's own (a probe of another customer's id stays with the prober's
     * customer and never tells it who owns the id).
     */
    async record(event: NewAuditEvent): Promise<void> {
      await sql.query({
        name: 'audit-record-v3',
        text: `WITH target AS (
                 SELECT CASE $9::text
                   WHEN 'service' THEN (SELECT customer_id FROM services WHERE id = $10)
                   WHEN 'deployment' THEN (SELECT s.customer_id FROM deployments d
                                           JOIN services s ON s.id = d.service_id WHERE d.id = $10)
                   WHEN 'customer' THEN (SELECT id FROM customers WHERE id = $10)
                   WHEN 'user' THEN (SELECT customer_id FROM users WHERE id = $10)
                   WHEN 'api_key' THEN (SELECT u.customer_id FROM api_keys k
                                        JOIN users u ON u.id = k.user_id WHERE k.id = $10)
                 END AS customer_id)
               INSERT INTO audit_events (id, actor_type, actor_user_id, actor_api_key_id, customer_id,
                 method, route, action, target_type, target_id, status_code, error_code,
                 source_address, request_id, actor_webhook_id, subject)
               SELECT gen_random_uuid()::text, $1, $2, $3,
                 CASE WHEN target.customer_id IS NOT NULL AND ($5::boolean OR target.customer_id = $4)
                      THEN target.customer_id ELSE $4 END,
                 $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16
               FROM target`,
        values: [
          event.actorType,
          event.actorUserId,
          event.actorApiKeyId,
          event.actorCustomerId,
          event.actorSeesAll,
          event.method,
          event.route,
          event.action,
          event.targetType,
          event.targetId,
          event.statusCode,
          event.errorCode,
          event.sourceAddress,
          event.requestId,
          event.actorWebhookId ?? null,
          event.subject ?? null,
        ],
      });
    },

    /** A page of events inside the scope, newest first, with the total of the filtered set. */
    async list(scope: CustomerScope, query: AuditQuery): Promise<{ rows: AuditEvent[]; total: number }> {
      const tenant = customerWhere(scope);
      if (tenant === null) return { rows: [], total: 0 };
      const where = {
        ...tenant,
        ...(query.actorUserId !== undefined ? { actorUserId: query.actorUserId } : {}),
        ...(query.actorApiKeyId !== undefined ? { actorApiKeyId: query.actorApiKeyId } : {}),
        ...(query.actorWebhookId !== undefined ? { actorWebhookId: query.actorWebhookId } : {}),
        ...(query.action !== undefined ? { action: query.action } : {}),
        ...(query.targetType !== undefined ? { targetType: query.targetType } : {}),
        ...(query.targetId !== undefined ? { targetId: query.targetId } : {}),
        ...(query.since !== undefined || query.until !== undefined
          ? {
              occurredAt: {
                ...(query.since !== undefined ? { gte: query.since } : {}),
                ...(query.until !== undefined ? { lt: query.until } : {}),
              },
            }
          : {}),
      };
      const [rows, total] = await Promise.all([
        db.auditEvent.findMany({
          where,
          orderBy: [{ occurredAt: 'desc' }, { id: 'desc' }],
          skip: (query.page - 1) * query.perPage,
          take: query.perPage,
        }),
        db.auditEvent.count({ where }),
      ]);
      return { rows, total };
    },

    /** The customer of each of these users (null: unscoped); users that no longer exist are absent. */
    async customersOfUsers(userIds: readonly string[]): Promise<Map<string, string | null>> {
      if (userIds.length === 0) return new Map();
      const users = await db.user.findMany({
        where: { id: { in: [...new Set(userIds)] } },
        select: { id: true, customerId: true },
      });
      return new Map(users.map((user) => [user.id, user.customerId]));
    },

    /**
     * Deletes events older than the cutoff in batches, so retention never holds a long lock on a
     * table every request writes to. Returns how many rows went.
     */
    async deleteOlderThan(cutoff: Date, batchSize = 5_000): Promise<number> {
      let removed = 0;
      for (;;) {
        const { rowCount } = await sql.query(
          `DELETE FROM audit_events WHERE id IN (
             SELECT id FROM audit_events WHERE occurred_at < $1 ORDER BY occurred_at LIMIT $2)`,
          [cutoff, batchSize],
        );
        removed += rowCount ?? 0;
        if ((rowCount ?? 0) < batchSize) return removed;
      }
    },
  };
}
