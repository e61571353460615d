import { Type } from 'typebox';
import { describe } from './describe.js';

/**
 * The release engine's windows (docs/deployments.md#release-windows): each lasts from its shortest
 * to its longest and ends in between on evidence; the worker's settings.
 */
export const releaseWindowSettings = {
  RELEASE_STABILIZATION_MS: describe(
    Type.Integer({ default: 10000, minimum: 0 }),
    'The longest a new release is watched (no restart, no exit, still healthy) before the proxy switches to it; it ends sooner on evidence (RELEASE_STABILIZATION_MIN_MS, RELEASE_HEALTH_PASSES; docs/deployments.md#release-windows).',
  ),
  RELEASE_STABILIZATION_MIN_MS: describe(
    Type.Integer({ default: 2000, minimum: 0 }),
    'The shortest watch before the switch: after it, the window ends once every health-checked container passed RELEASE_HEALTH_PASSES checks in a row. Equal to RELEASE_STABILIZATION_MS (or above): a fixed window.',
  ),
  RELEASE_HEALTH_PASSES: describe(
    Type.Integer({ default: 2, minimum: 1, maximum: 5 }),
    'Health checks a container with a health check must pass in a row before its release may take traffic early (the engine keeps the last 5).',
  ),
  RELEASE_DRAIN_MS: describe(
    Type.Integer({ default: 10000, minimum: 0 }),
    'The longest the previous release keeps running after the switch while the new one is still watched (a failure meanwhile rolls back); the drain ends sooner once the proxy has no request in flight to the previous release. Under RUNTIME=swarm, Swarm watches an update for RELEASE_STABILIZATION_MS + RELEASE_DRAIN_MS (docs/swarm-runtime.md).',
  ),
  RELEASE_DRAIN_MIN_MS: describe(
    Type.Integer({ default: 2000, minimum: 0 }),
    'The shortest drain: the new release is watched at least this long after the switch before the previous one is retired. Equal to RELEASE_DRAIN_MS (or above): a fixed drain.',
  ),
};
