import type { WorkerConfig } from '@hostctl/config';
import type { WorkerNotificationStore } from '@hostctl/db';
import type { SourcePolicy } from '@hostctl/source-policy';
import type { Logger } from 'pino';
import { createNotificationProcessor } from './notification.processor.js';

/**
 * The `notify` processor as the configuration asks for it. Receivers have their own allowlist;
 * the protected endpoints are the array the git sources use (the worker adds its health port to
 * it once known), so a receiver can never be pointed at the worker itself.
 */
export function notificationProcessorOf(
  config: WorkerConfig,
  store: WorkerNotificationStore,
  policy: Pick<SourcePolicy, 'notificationAllowedHosts' | 'protectedEndpoints'>,
  logger: Logger,
) {
  return createNotificationProcessor({
    store,
    policy: {
      allowedHosts: policy.notificationAllowedHosts,
      protectedEndpoints: policy.protectedEndpoints,
    },
    showResponseBody: config.NOTIFY_SHOW_RESPONSE_BODY,
    customerShare: config.NOTIFY_CUSTOMER_CONCURRENCY,
    maxAttempts: config.NOTIFY_MAX_ATTEMPTS,
    retryBaseMs: config.NOTIFY_RETRY_BASE_MS,
    timeoutMs: config.NOTIFY_TIMEOUT_MS,
    logger,
  });
}
