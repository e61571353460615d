import { Type } from 'typebox';
import { describe } from './describe.js';

/** The worker's usage metering (docs/metering.md). */
export const meteringSettings = {
  METERING_INTERVAL_MS: describe(
    Type.Integer({ default: 60000, minimum: 1000 }),
    'How often a worker looks for an hour of usage to close (docs/metering.md). Any number of workers may: one closes each hour, once.',
  ),
};
