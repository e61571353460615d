import type { Redis } from 'ioredis';
import { runOutputStreamKey, type LogEntry } from '@hostctl/queue';
import { fieldsOf, toEntry, unavailableOnError, withStreamReader, type StreamEntry } from './log-reader.js';

/** How long one read waits before the follower asks whether the run ended without its end entry. */
const FINAL_CHECK_MS = 2000;

export interface RunOutputReader {
  /** What the run's stream holds now (at most its cap), oldest first. */
  snapshot(runId: string): Promise<LogEntry[]>;
  /**
   * Emits the run's output from its start as it arrives, until the worker's end entry, or until
   * `isFinal` says the run ended without one (its worker died, Redis lost it): then what is left
   * is read once more. Ends early when the signal aborts (the stream guard, the client leaving).
   */
  follow(
    runId: string,
    emit: (entry: LogEntry) => void,
    isFinal: () => Promise<boolean>,
    signal: AbortSignal,
  ): Promise<void>;
}

/**
 * Reads the output stream of a run (docs/jobs.md#output), which the worker running the command
 * writes: the application log's mechanism (adr/0006, log-reader.ts), one stream per run.
 */
export function createRunOutputReader(redis: Redis, prefix: string): RunOutputReader {
  return {
    async snapshot(runId) {
      const rows = (await unavailableOnError(() =>
        redis.xrange(runOutputStreamKey(prefix, runId), '-', '+'),
      )) as StreamEntry[];
      return rows.filter((row) => !fieldsOf(row[1]).has('end')).map(toEntry);
    },

    async follow(runId, emit, isFinal, signal) {
      const key = runOutputStreamKey(prefix, runId);
      let lastId = '0-0';
      /** Emits the rows up to an end entry; true when there was one. */
      const emitUntilEnd = (rows: StreamEntry[]): boolean => {
        for (const row of rows) {
          if (fieldsOf(row[1]).has('end')) return true;
          lastId = row[0];
          emit(toEntry(row));
        }
        return false;
      };
      await withStreamReader(redis, signal, async (read) => {
        while (!signal.aborted) {
          const rows = await read(key, lastId, FINAL_CHECK_MS);
          if (emitUntilEnd(rows)) return;
          // Only after a quiet read: a run that is final has written all it will.
          if (rows.length === 0 && (await isFinal())) {
            let rest = await read(key, lastId);
            while (rest.length > 0 && !emitUntilEnd(rest)) rest = await read(key, lastId);
            return;
          }
        }
      });
    },
  };
}
