import type { Db } from '@hostctl/db';
import { createScheduler, type ScheduleSource } from '../schedules/scheduler.js';
import { barrier } from './barrier.js';
import { silentLogger } from './fixtures.js';

/**
 * Scheduler replicas as the scheduler tests need them: one per connection pool in `dbs` (one
 * worker replica each), one test clock, and each pass's reads of due schedules released together,
 * so every replica sees the same due rows before any records one (the race the guarantees are about).
 * `tick` runs one pass of every replica at the same moment and answers their results.
 */
export function racingSchedulers(options: {
  dbs: Db[];
  clock: { now: Date };
  missedGraceMs: number;
  source: (client: Db) => ScheduleSource;
}) {
  let meet = barrier(options.dbs.length);
  const instances = options.dbs.map((client) => {
    const source = options.source(client);
    return createScheduler({
      sources: [
        {
          ...source,
          due: async (now, limit) => {
            const due = await source.due(now, limit);
            await meet();
            return due;
          },
        },
      ],
      intervalMs: 1000,
      missedGraceMs: options.missedGraceMs,
      logger: silentLogger,
      now: () => options.clock.now,
    });
  });
  return {
    tick: async (): Promise<{ queued: number; missed: number }[]> => {
      meet = barrier(options.dbs.length);
      return Promise.all(instances.map((instance) => instance.runOnce()));
    },
  };
}

/** How many rows the replicas of one pass queued together. */
export const queuedBy = (passes: { queued: number }[]): number =>
  passes.reduce((sum, pass) => sum + pass.queued, 0);
