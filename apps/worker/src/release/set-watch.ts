import { setTimeout as sleep } from 'node:timers/promises';
import type { Plan, PlanContainer } from '@hostctl/compose';
import type { ContainerRuntime, ContainerState } from '../adapters/runtime.js';
import { PermanentStepError } from '../pipeline/step-errors.js';
import { INLINE_WAIT_MS, PAUSE_LONGEST_MS, PAUSE_POLL_MS, ReleaseWaiting } from './release-waiting.js';

/**
 * Watches a verified set: every container must stay running, never restart and never turn
 * unhealthy. This is what catches a release that passes its first health check and crashes
 * seconds later (before the switch: the old release never stopped serving; during the drain:
 * traffic goes back to it). The watch ends on evidence, not on a fixed clock (issue 29): once
 * `minMs` has passed, as soon as every health-checked container has passed `healthPasses` checks
 * in a row and `settled` holds (the drain: the previous release has no request in flight); at
 * `maxMs` whatever the evidence. `minMs` equal to `maxMs` is a fixed window; a zero window checks once.
 */
export interface WatchWindow {
  minMs: number;
  maxMs: number;
  healthPasses: number;
  settled?: () => Promise<boolean>;
}

/** Why the watch ended, for the deployment log. */
export interface WatchEnd {
  by: 'evidence' | 'maximum';
  afterMs: number;
}

const POLL_MS = 250;

/**
 * `startedAt`: when the window began (a resumed release's recorded start; default now). `pause`:
 * instead of sleeping longer than INLINE_WAIT_MS, throw ReleaseWaiting with when to look again
 * (release-waiting.ts); the caller resumes the watch then with the same `startedAt`.
 */
export interface WatchOptions {
  startedAt?: number;
  pause?: boolean;
}

export async function watchSet(
  runtime: Pick<ContainerRuntime, 'inspectContainer' | 'containerLogs'>,
  plan: Plan,
  ids: Map<string, string>,
  window: WatchWindow,
  signal: AbortSignal,
  during: string,
  options: WatchOptions = {},
): Promise<WatchEnd> {
  const started = options.startedAt ?? Date.now();
  const minMs = Math.min(window.minMs, window.maxMs);
  for (;;) {
    signal.throwIfAborted();
    let proven = true;
    for (const container of plan.containers) {
      const state = await watched(runtime, container, ids.get(container.name), during);
      if (hasHealthcheck(container) && (state.healthyStreak ?? 0) < window.healthPasses) proven = false;
    }
    const elapsed = Date.now() - started;
    if (elapsed >= window.maxMs) return { by: 'maximum', afterMs: elapsed };
    if (elapsed >= minMs && proven && (await (window.settled?.() ?? true)))
      return { by: 'evidence', afterMs: elapsed };
    const poll = options.pause ? PAUSE_POLL_MS : POLL_MS;
    const next = elapsed < minMs ? minMs - elapsed : Math.min(poll, window.maxMs - elapsed);
    if (options.pause && next > INLINE_WAIT_MS)
      throw new ReleaseWaiting(Date.now() + Math.min(next, PAUSE_LONGEST_MS));
    await sleep(Math.min(POLL_MS, next), undefined, { signal });
  }
}

/** The container's state, or the failure that ends the release, with its last output. */
async function watched(
  runtime: Pick<ContainerRuntime, 'inspectContainer' | 'containerLogs'>,
  container: PlanContainer,
  id: string | undefined,
  during: string,
): Promise<ContainerState> {
  const state = id ? await runtime.inspectContainer(id) : null;
  if (!id || !state) throw new PermanentStepError(`container ${container.name} disappeared ${during}`);
  const problem =
    !state.isRunning && !state.isRestarting
      ? `exited ${during} (exit code ${state.exitCode})`
      : state.isRestarting || state.restartCount > 0
        ? `restarted ${during} (exit code ${state.exitCode})`
        : state.health === 'unhealthy'
          ? `became unhealthy ${during}`
          : undefined;
  if (!problem) return state;
  const tail = (await runtime.containerLogs(id, 20)).trim();
  throw new PermanentStepError(
    `container ${container.name} ${problem}${tail ? `; last output:\n${tail}` : ''}`,
  );
}

const hasHealthcheck = (container: PlanContainer) =>
  container.healthcheck !== undefined && container.healthcheck.test[0] !== 'NONE';

/** How the watch ended, as the deployment log says it ("after 2.0 s: every check passed"). */
export const describeWatchEnd = (end: WatchEnd) =>
  end.by === 'evidence'
    ? `after ${(end.afterMs / 1000).toFixed(1)} s: every check passed`
    : `after ${(end.afterMs / 1000).toFixed(1)} s, its longest window`;
