import { Type } from 'typebox';
import { describe } from './describe.js';

/** The worker's usage metering (docs/metering.md) and over-quota sweep (docs/quotas.md). */
export const meteringSettings = {
  QUOTA_SWEEP_INTERVAL_MS: describe(
    Type.Integer({ default: 60000, minimum: 1000 }),
    "How often a worker compares every customer's usage with its quotas and sends quota.exceeded once per quota over its limit (docs/quotas.md#over-quota-notification). Any number of workers may.",
  ),
  METERING_INTERVAL_MS: describe(
    Type.Integer({ default: 60000, minimum: 1000 }),
    'How often a worker looks for an hour of usage to close (docs/metering.md). Any number of workers may: one closes each hour, once.',
  ),
};
