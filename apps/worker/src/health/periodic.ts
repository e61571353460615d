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
    running = sweep()
      .catch((error: unknown) => logger.error({ err: messageOf(error) }, `${name} sweep failed`))
      .finally(() => {
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
