import { Type } from 'typebox';
import { describe } from './describe.js';

/** How the worker attempts one notification delivery (docs/notifications.md#durability). */
export const notificationAttemptSettings = {
  NOTIFY_MAX_ATTEMPTS: describe(
    Type.Integer({ default: 8, minimum: 1, maximum: 50 }),
    'Attempts of one notification delivery before it is marked failed (docs/notifications.md).',
  ),
  NOTIFY_RETRY_BASE_MS: describe(
    Type.Integer({ default: 30000, minimum: 100 }),
    'Wait after the first failed notification attempt; it doubles after each further one (8 attempts span about an hour).',
  ),
  NOTIFY_TIMEOUT_MS: describe(
    Type.Integer({ default: 10000, minimum: 100, maximum: 60000 }),
    'Connect plus response timeout of one notification attempt.',
  ),
};
