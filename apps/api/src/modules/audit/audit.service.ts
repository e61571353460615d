import { customerScope, type Principal } from '@hostctl/auth-policy';
import type { AuditEvent, AuditStore } from '@hostctl/db';
import { LIMITS, validationError } from '@hostctl/domain';
import { parseTimestamp } from '../../http/input-bounds.js';
import type { AuditEventItem, AuditEventsQuery } from './audit.schemas.js';

export type AuditService = ReturnType<typeof createAuditService>;

/** Reading the audit log: admins only (the route's permission), a scoped admin its customer's events. */
export function createAuditService(deps: { store: Pick<AuditStore, 'list' | 'customersOfUsers'> }) {
  return {
    async list(principal: Principal, query: AuditEventsQuery) {
      const page = query.page ?? 1;
      const perPage = query.per_page ?? LIMITS.perPageDefault;
      // parseTimestamp reads a leap second as the second before (`…23:59:60Z` stays in year 9999).
      const since = query.since !== undefined ? parseTimestamp(query.since) : undefined;
      const until = query.until !== undefined ? parseTimestamp(query.until) : undefined;
      if (since && until && since.getTime() > until.getTime()) {
        throw validationError('/querystring/until', 'must not be before since');
      }
      const { rows, total } = await deps.store.list(customerScope(principal), {
        page,
        perPage,
        ...(query.actor_user_id !== undefined ? { actorUserId: query.actor_user_id } : {}),
        ...(query.actor_api_key_id !== undefined ? { actorApiKeyId: query.actor_api_key_id } : {}),
        ...(query.actor_webhook_id !== undefined ? { actorWebhookId: query.actor_webhook_id } : {}),
        ...(query.action !== undefined ? { action: query.action } : {}),
        ...(query.target_type !== undefined ? { targetType: query.target_type } : {}),
        ...(query.target_id !== undefined ? { targetId: query.target_id } : {}),
        ...(since ? { since } : {}),
        ...(until ? { until } : {}),
      });
      const items = rows.map(toItem);
      if (principal.customerId === null) return { data: items, total, page, per_page: perPage };
      // A customer's admin sees its own people; anyone else who acted on its resources is the
      // platform's staff, whose user and key ids and addresses are not the customer's to know.
      const userIds = rows.flatMap((row) => (row.actorUserId ? [row.actorUserId] : []));
      const customers = await deps.store.customersOfUsers(userIds);
      const isOwn = (userId: string | null) =>
        userId !== null && customers.get(userId) === principal.customerId;
      const data = items.map((item) =>
        item.actor.user_id !== null && !isOwn(item.actor.user_id) ? asPlatformStaff(item) : item,
      );
      return { data, total, page, per_page: perPage };
    },
  };
}

/** What a customer's admin sees of a request by someone outside its customer. */
const PLATFORM_STAFF = 'platform staff';

function asPlatformStaff(item: AuditEventItem): AuditEventItem {
  return {
    ...item,
    actor: { ...item.actor, user_id: null, api_key_id: null },
    source_address: PLATFORM_STAFF,
  };
}

function toItem(row: AuditEvent): AuditEventItem {
  return {
    id: row.id,
    occurred_at: row.occurredAt.toISOString(),
    actor: {
      type: row.actorType as AuditEventItem['actor']['type'],
      user_id: row.actorUserId,
      api_key_id: row.actorApiKeyId,
      webhook_id: row.actorWebhookId,
    },
    method: row.method,
    route: row.route,
    action: row.action,
    target:
      row.targetType !== null && row.targetId !== null ? { type: row.targetType, id: row.targetId } : null,
    subject: row.subject,
    customer_id: row.customerId,
    status_code: row.statusCode,
    error_code: row.errorCode,
    source_address: row.sourceAddress,
    request_id: row.requestId,
  };
}
