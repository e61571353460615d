import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import { messageOf } from '../pipeline/step-errors.js';

/**
 * Runs `sweep` every `intervalMs`, one sweep at a time (the next is scheduled when the previous
 * ends, so a slow sweep never overlaps itself). stop() waits for a sweep in progress.
 */
export interface Periodic {
  start: () => void;
  stop: () => Promise<void>;
}

/** How long one periodic task's sweeps take against its interval (the worker's /metrics). */
export interface PeriodicTiming {
  intervalSeconds: number;
  lastSeconds: number;
  maxSeconds: number;
  sweeps: number;
}

/**
 * Per task name, this process's sweep timings: a sweep that nears its interval is work that grows
 * with the services (docs/performance.md#density). One table per process, not per app: tests that
 * build several apps in one process share it, which only mixes figures nobody asserts on.
 */
const timings = new Map<string, PeriodicTiming>();

export function periodicTimings(): ReadonlyMap<string, Readonly<PeriodicTiming>> {
  return timings;
}

function recordSweep(name: string, intervalMs: number, seconds: number): void {
  const timing = timings.get(name) ?? { intervalSeconds: 0, lastSeconds: 0, maxSeconds: 0, sweeps: 0 };
  timing.intervalSeconds = intervalMs / 1000;
  timing.lastSeconds = seconds;
  timing.maxSeconds = Math.max(timing.maxSeconds, seconds);
  timing.sweeps += 1;
  timings.set(name, timing);
}

export function createPeriodic(
  name: string,
  intervalMs: number,
  sweep: () => Promise<unknown>,
  logger: Logger,
): Periodic {
  let timer: NodeJS.Timeout | undefined;
  let isStopped = true;
  let running: Promise<unknown> | undefined;

  const tick = () => {
    const startedAt = performance.now();
    running = sweep()
      .catch((error: unknown) => logger.error({ err: messageOf(error) }, `${name} sweep failed`))
      .finally(() => {
        recordSweep(name, intervalMs, (performance.now() - startedAt) / 1000);
        if (!isStopped) timer = setTimeout(tick, intervalMs);
      });
  };

  return {
    start() {
      if (!isStopped) return;
      isStopped = false;
      timer = setTimeout(tick, intervalMs);
    },
    async stop() {
      isStopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}

/** Runs `task` over `items` with at most `limit` at once. */
export async function forEachBounded<T>(
  items: readonly T[],
  limit: number,
  task: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await task(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}
