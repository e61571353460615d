import type { Plan } from '@hostctl/compose';
import type { RouteTarget } from '../adapters/router.js';
import type { WatchWindow } from './set-watch.js';

/**
 * The release engine's two windows (docs/deployments.md#release-windows): how long a new release
 * is watched before the switch, and how long the previous one drains after it. Each lasts from its
 * shortest to its longest and ends in between on evidence (release/set-watch.ts).
 */
/** RELEASE_STABILIZATION_MIN_MS, RELEASE_DRAIN_MIN_MS, RELEASE_HEALTH_PASSES. */
export interface ReleaseEvidence {
  stabilizationMinMs: number;
  drainMinMs: number;
  healthPasses: number;
}

/** Before the switch (and, stop-first, after it). Without evidence settings: its longest, fixed. */
export function stabilizationWindow(longestMs: number, evidence: ReleaseEvidence | undefined): WatchWindow {
  if (!evidence) return { minMs: longestMs, maxMs: longestMs, healthPasses: 0 };
  return { minMs: evidence.stabilizationMinMs, maxMs: longestMs, healthPasses: evidence.healthPasses };
}

/**
 * The drain ends early only when it is known that nothing is left to drain: the previous release
 * had no web endpoint, or the proxy counts its requests in flight and they have ended. A proxy
 * that cannot be asked (an admin API hiccup) is no evidence: the drain goes on, never rolls back.
 * A previous release whose plan is unknown (recorded before plans were) drains its longest.
 */
export function drainWindow(drain: {
  longestMs: number;
  evidence: ReleaseEvidence | undefined;
  previous: Plan | undefined;
  /** The previous release's addresses the route still names (empty: the proxy is not counting). */
  draining: RouteTarget[];
  inFlight: ((targets: RouteTarget[]) => Promise<number>) | undefined;
}): WatchWindow {
  const { longestMs, evidence, previous, draining, inFlight } = drain;
  const fixed = { minMs: longestMs, maxMs: longestMs, healthPasses: 0 };
  if (!evidence || !previous) return fixed;
  const window = { minMs: evidence.drainMinMs, maxMs: longestMs, healthPasses: 0 };
  if (!previous.web) return window;
  if (draining.length === 0 || !inFlight) return fixed;
  return {
    ...window,
    settled: async () => (await inFlight(draining).catch(() => Number.POSITIVE_INFINITY)) === 0,
  };
}

/** For the deployment log: "at least 2000 ms, at most 10000 ms", or one figure when fixed. */
export const describeWindow = (window: WatchWindow) =>
  window.minMs >= window.maxMs
    ? `${window.maxMs} ms`
    : `at least ${window.minMs} ms, at most ${window.maxMs} ms`;
