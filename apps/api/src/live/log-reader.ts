import type { Redis } from 'ioredis';
import { DomainError } from '@hostctl/domain';
import { serviceLogStreamKey, type LogEntry } from '@hostctl/queue';

export type StreamEntry = [id: string, fields: string[]];

/** Reads the entries after `lastId`; with `blockMs`, waits that long for the first one. */
type StreamRead = (key: string, lastId: string, blockMs?: number) => Promise<StreamEntry[]>;

const FOLLOW_BLOCK_MS = 10_000;

export interface LogReader {
  /** The last `tail` lines (optionally only those at or after `since`), oldest first, with the id to follow from. */
  snapshot(
    serviceId: string,
    options: { tail: number; since?: Date },
  ): Promise<{ entries: LogEntry[]; lastId: string }>;
  /**
   * Emits entries after `fromId` as they arrive until the signal aborts (the stream guard aborts it
   * when the credential or the service's visibility is gone).
   */
  follow(
    serviceId: string,
    fromId: string,
    emit: (entry: LogEntry) => void,
    signal: AbortSignal,
  ): Promise<void>;
}

/** Reads the per-service capped Redis Streams the worker's log shipper writes. */
export function createLogReader(redis: Redis, prefix: string): LogReader {
  return {
    async snapshot(serviceId, { tail, since }) {
      const key = serviceLogStreamKey(prefix, serviceId);
      // Stream ids start with the arrival time in ms and a line never arrives before it was
      // written, so every line at or after `since` lies in the id range from `since`. The range
      // also holds lines backfilled after a shipper gap, written before `since`: those are
      // dropped by their own timestamp, reading further back until `tail` lines are found.
      // Stream ids cannot be negative: a `since` before 1970 means "from the start".
      const low = since ? `${Math.max(0, since.getTime())}-0` : '-';
      const newestFirst: LogEntry[] = [];
      let high = '+';
      let lastId: string | undefined;
      while (newestFirst.length < tail) {
        const wanted = tail - newestFirst.length;
        const rows = (await unavailableOnError(() =>
          redis.xrevrange(key, high, low, 'COUNT', wanted),
        )) as StreamEntry[];
        lastId ??= rows[0]?.[0];
        for (const row of rows) {
          const entry = toEntry(row);
          if (isAtOrAfter(entry, since)) newestFirst.push(entry);
        }
        const oldest = rows.at(-1);
        if (!oldest || rows.length < wanted) break;
        high = `(${oldest[0]}`;
      }
      return { entries: newestFirst.reverse(), lastId: lastId ?? (await lastIdOf(redis, key)) };
    },

    async follow(serviceId, fromId, emit, signal) {
      const key = serviceLogStreamKey(prefix, serviceId);
      let lastId = fromId;
      await withStreamReader(redis, signal, async (read) => {
        while (!signal.aborted) {
          for (const row of await read(key, lastId, FOLLOW_BLOCK_MS)) {
            lastId = row[0];
            emit(toEntry(row));
          }
        }
      });
    },
  };
}

/**
 * Runs `use` with a connection of its own for XREAD BLOCK (a blocked read holds its connection:
 * each follower gets one, closed when it leaves). An abort disconnects it, which ends a pending
 * read at once; the error that makes is not one.
 */
export async function withStreamReader(
  redis: Redis,
  signal: AbortSignal,
  use: (read: StreamRead) => Promise<void>,
): Promise<void> {
  const reader = redis.duplicate({
    maxRetriesPerRequest: null,
    enableOfflineQueue: true,
    commandTimeout: undefined,
  });
  const close = () => reader.disconnect();
  signal.addEventListener('abort', close, { once: true });
  const read: StreamRead = async (key, lastId, blockMs) => {
    const result =
      blockMs === undefined
        ? await reader.xread('COUNT', 500, 'STREAMS', key, lastId)
        : await reader.xread('COUNT', 500, 'BLOCK', blockMs, 'STREAMS', key, lastId);
    return result?.[0]?.[1] ?? [];
  };
  try {
    await use(read);
  } catch (error) {
    if (!signal.aborted) throw error;
  } finally {
    signal.removeEventListener('abort', close);
    reader.disconnect();
  }
}

async function lastIdOf(redis: Redis, key: string): Promise<string> {
  const last = (await unavailableOnError(() => redis.xrevrange(key, '+', '-', 'COUNT', 1))) as StreamEntry[];
  return last[0]?.[0] ?? '0-0';
}

/** By the line's own time (what the client sees), not its arrival. */
export function isAtOrAfter(entry: LogEntry, since: Date | undefined): boolean {
  return since === undefined || Date.parse(entry.timestamp) >= since.getTime();
}

/** An entry's fields by name. */
export function fieldsOf(fields: string[]): Map<string, string> {
  const map = new Map<string, string>();
  for (let i = 0; i + 1 < fields.length; i += 2) map.set(fields[i] ?? '', fields[i + 1] ?? '');
  return map;
}

export function toEntry([id, fields]: StreamEntry): LogEntry {
  const map = fieldsOf(fields);
  const stream = map.get('stream') === 'stderr' ? 'stderr' : 'stdout';
  const timestamp = map.get('ts') ?? new Date(Number(id.split('-')[0])).toISOString();
  return { timestamp, stream, message: map.get('message') ?? '' };
}

export async function unavailableOnError<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw new DomainError('dependency_unavailable', 'the log store is unavailable; retry shortly', {
      headers: { 'retry-after': '5' },
      cause: error,
    });
  }
}
