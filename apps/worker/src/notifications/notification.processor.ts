import type { Job } from 'bullmq';
import type { ClaimedDelivery, WorkerNotificationStore } from '@hostctl/db';
import type { JobPayload } from '@hostctl/queue';
import {
  checkNotificationUrl,
  NOTIFICATION_ALLOWLIST,
  resolveAndCheckHost,
  type GitUrlOptions,
  type Lookup,
} from '@hostctl/source-policy';
import type { Logger } from 'pino';
import { postNotification, type PostOutcome } from './notification-sender.js';
import { signatureHeader } from './signature.js';

/**
 * One attempt of one delivery (docs/notifications.md#delivery). The schedule lives in PostgreSQL,
 * not in BullMQ's retries: the claim counts the attempt, a failure writes the next attempt time
 * (exponential backoff), and the relay enqueues it when due. A job that finds its delivery not
 * due (a duplicate, or one whose attempt another job holds) does nothing, and one whose customer
 * already has its share of attempts in flight returns its slot without sending.
 */
export interface NotificationProcessorDeps {
  store: Pick<WorkerNotificationStore, 'claim' | 'recordDelivered' | 'recordFailure'>;
  /** NOTIFICATION_ALLOWED_HOSTS and the control plane's endpoints. */
  policy: GitUrlOptions;
  /**
   * NOTIFY_SHOW_RESPONSE_BODY: keep the start of the answer for the tenant to read. Off by default:
   * a tenant sees the status, never what an endpoint it pointed the worker at answered.
   */
  showResponseBody: boolean;
  /** NOTIFY_CUSTOMER_CONCURRENCY: attempts one customer may have in flight across every worker. */
  customerShare: number;
  maxAttempts: number;
  retryBaseMs: number;
  timeoutMs: number;
  logger: Logger;
  lookup?: Lookup;
}

/** How far past the request timeout a claim holds: a killed worker's attempt is retried after it. */
const CLAIM_MARGIN_MS = 5000;
/** The backoff doubles up to this wait between two attempts. */
const MAX_RETRY_WAIT_MS = 6 * 3600 * 1000;

function retryWaitMs(retryBaseMs: number, attempt: number): number {
  return Math.min(retryBaseMs * 2 ** Math.max(0, attempt - 1), MAX_RETRY_WAIT_MS);
}

export function createNotificationProcessor(deps: NotificationProcessorDeps) {
  const attempt = async (delivery: ClaimedDelivery): Promise<PostOutcome & { isPermanent: boolean }> => {
    const refused = (error: string, isPermanent: boolean) => ({
      ok: false,
      statusCode: null,
      error,
      response: null,
      isPermanent,
    });
    if (!delivery.subscription.enabled) return refused('the subscription is disabled', true);
    // Again at delivery time: the allowlist may have changed since the subscription was saved.
    const verdict = checkNotificationUrl(delivery.subscription.url, deps.policy);
    if (!verdict.ok) return refused(`target URL refused: ${verdict.reason}`, true);
    const resolved = await resolveAndCheckHost(verdict.target.host, verdict.target.isAllowlisted, {
      allowlistName: NOTIFICATION_ALLOWLIST,
      ...(deps.lookup ? { lookup: deps.lookup } : {}),
    });
    // A name that resolves to an internal address today may not tomorrow (or DNS failed): retried.
    if (!resolved.ok) return refused(`target URL refused: ${resolved.reason}`, false);
    const body = JSON.stringify(delivery.body);
    const outcome = await postNotification({
      url: delivery.subscription.url,
      ...(resolved.resolved.addresses[0] ? { pinnedAddress: resolved.resolved.addresses[0] } : {}),
      headers: {
        'content-type': 'application/json',
        'user-agent': 'hostctl-notifications/1',
        'hostctl-event': delivery.event,
        'hostctl-delivery': delivery.id,
        'hostctl-signature': signatureHeader(
          delivery.subscription.secret,
          Math.floor(Date.now() / 1000),
          body,
        ),
      },
      body,
      timeoutMs: deps.timeoutMs,
    });
    return { ...outcome, isPermanent: false };
  };

  return async (job: Job<JobPayload<'notify'>>): Promise<{ status: string }> => {
    const delivery = await deps.store.claim(
      job.data.deliveryId,
      deps.timeoutMs + CLAIM_MARGIN_MS,
      deps.customerShare,
    );
    if (!delivery) return { status: 'not_due' };
    // The slot goes back at once; the delivery stays due and the relay enqueues it again.
    if (delivery === 'customer_busy') return { status: 'customer_busy' };
    const outcome = await attempt(delivery);
    const result = {
      statusCode: outcome.statusCode,
      error: outcome.error,
      response: deps.showResponseBody ? outcome.response : null,
    };
    const log = { deliveryId: delivery.id, event: delivery.event, attempt: delivery.attempt };
    if (outcome.ok) {
      await deps.store.recordDelivered(delivery.id, result);
      deps.logger.info({ ...log, statusCode: outcome.statusCode }, 'notification delivered');
      return { status: 'delivered' };
    }
    const isLast = outcome.isPermanent || delivery.attempt >= deps.maxAttempts;
    const retryAt = isLast ? null : new Date(Date.now() + retryWaitMs(deps.retryBaseMs, delivery.attempt));
    await deps.store.recordFailure(delivery.id, delivery.attempt, result, retryAt);
    deps.logger.warn(
      { ...log, statusCode: outcome.statusCode, err: outcome.error, retryAt },
      isLast ? 'notification failed for good' : 'notification attempt failed; retrying later',
    );
    return { status: isLast ? 'failed' : 'retrying' };
  };
}
