import { Type } from 'typebox';
import { describe } from './describe.js';

/** The terminal into a running service (docs/jobs.md#terminal): bounds the API enforces. */
export const execApiSettings = {
  EXEC_IDLE_TIMEOUT_MS: describe(
    Type.Integer({ default: 900000, minimum: 1000, maximum: 86400000 }),
    'A terminal (GET /api/services/:id/exec) that receives no input for this long is closed (4408, docs/jobs.md#terminal).',
  ),
  EXEC_MAX_PER_SERVICE: describe(
    Type.Integer({ default: 3, minimum: 1, maximum: 100 }),
    'Terminals open at once into one service, across every API replica (429 exec_limit beyond).',
  ),
  EXEC_MAX_PER_CUSTOMER: describe(
    Type.Integer({ default: 10, minimum: 1, maximum: 1000 }),
    "Terminals open at once into one customer's services, across every API replica (429 exec_limit beyond).",
  ),
};

/** How many terminals one worker relays at once (they wait on I/O: their own queue, docs/jobs.md#terminal). */
export const execWorkerSettings = {
  EXEC_WORKER_SLOTS: describe(
    Type.Integer({ default: 50, minimum: 1, maximum: 1000 }),
    'Terminals one worker replica relays at once (the terminals queue has its own slots, so a terminal never waits behind a deploy).',
  ),
};
