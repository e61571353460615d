import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { serviceLogStreamKey } from '@hostctl/queue';
import type { OutputStream } from '../adapters/telemetry.js';
import { messageOf } from '../pipeline/step-errors.js';
import type { RedisLease } from './redis-lease.js';

/**
 * Batches shipped lines into Redis. One script call per batch, atomic: it checks the lease token
 * (fencing), XADDs every line with MAXLEN ~ and moves each container's cursor to the newest
 * timestamp written. Lines and cursor therefore never disagree, which is what makes backfill
 * after a restart exactly-once.
 */
export interface ShippedLine {
  containerId: string;
  serviceId: string;
  component: string;
  /** Normalised RFC 3339 (see log-lines.ts): compared as strings by the script. */
  ts: string;
  stream: OutputStream;
  message: string;
}

export interface LogWriter {
  push(line: ShippedLine): void;
  /** Resolves once everything pushed so far is written (or dropped because the lease was lost). */
  drain(): Promise<void>;
  readonly isUnderPressure: boolean;
  /** Stops writing; what is still queued is dropped (it is re-read from Docker after the cursor). */
  close(): void;
}

/** Per-container cursor: the newest Docker timestamp shipped for that container. */
export function logCursorKey(prefix: string, containerId: string): string {
  return `${prefix}:log-cursor:${containerId}`;
}

const SHIP = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
local a = 5
for k = 2, #KEYS, 2 do
  local n = tonumber(ARGV[a])
  a = a + 1
  local last = redis.call('GET', KEYS[k + 1]) or ''
  for i = 1, n do
    redis.call('XADD', KEYS[k], 'MAXLEN', '~', ARGV[2], '*',
      'ts', ARGV[a], 'stream', ARGV[a + 1], 'message', ARGV[a + 2], 'container', ARGV[a + 3])
    if ARGV[a] > last then last = ARGV[a] end
    a = a + 4
  end
  redis.call('SET', KEYS[k + 1], last, 'PX', ARGV[3])
  redis.call('PEXPIRE', KEYS[k], ARGV[4])
end
return 1`;

const BATCH_LINES = 1000;
const BATCH_BYTES = 1024 * 1024;
/** Followers pause above the high mark and resume below the low one: memory stays bounded. */
const HIGH_WATER = 5000;
const LOW_WATER = 1000;
const RETRY_MS = 500;

export interface LogWriterOptions {
  redis: Redis;
  prefix: string;
  lease: RedisLease;
  maxlen: number;
  /** Cursors of containers that stopped shipping expire after this. */
  cursorTtlMs: number;
  /** A stream nobody writes to (its service deleted) expires after this. */
  streamTtlMs: number;
  onLeaseLost(): void;
  onPressure(isHigh: boolean): void;
  logger: Logger;
}

export function createLogWriter(options: LogWriterOptions): LogWriter {
  const { redis, prefix, lease, logger } = options;
  let queue: ShippedLine[] = [];
  let flushing: Promise<void> | undefined;
  let isClosed = false;
  let isUnderPressure = false;
  // Lines pushed and lines written (or dropped): drain() waits for a mark, not for an empty
  // queue, which busy containers might never leave.
  let pushed = 0;
  let settled = 0;
  let waiters: { mark: number; resolve: () => void }[] = [];

  const settle = (count: number) => {
    settled += count;
    waiters = waiters.filter((waiter) => {
      if (settled < waiter.mark && !isClosed) return true;
      waiter.resolve();
      return false;
    });
  };

  const shut = () => {
    isClosed = true;
    queue = [];
    settle(pushed - settled);
  };

  const takeBatch = (): ShippedLine[] => {
    let bytes = 0;
    let count = 0;
    while (count < queue.length && count < BATCH_LINES && bytes < BATCH_BYTES) {
      bytes += (queue[count]?.message.length ?? 0) + 64;
      count += 1;
    }
    return queue.slice(0, count);
  };

  const write = async (batch: ShippedLine[]): Promise<number> => {
    const groups = new Map<string, ShippedLine[]>();
    for (const line of batch) {
      const group = groups.get(line.containerId);
      if (group) group.push(line);
      else groups.set(line.containerId, [line]);
    }
    const keys = [lease.key];
    const args = [
      lease.token,
      String(options.maxlen),
      String(options.cursorTtlMs),
      String(options.streamTtlMs),
    ];
    for (const [containerId, lines] of groups) {
      keys.push(serviceLogStreamKey(prefix, lines[0]!.serviceId), logCursorKey(prefix, containerId));
      args.push(String(lines.length));
      for (const line of lines) args.push(line.ts, line.stream, line.message, line.component);
    }
    return Number(await redis.eval(SHIP, keys.length, ...keys, ...args));
  };

  const loop = async () => {
    while (queue.length > 0 && !isClosed) {
      const batch = takeBatch();
      try {
        if ((await write(batch)) === -1) {
          logger.warn({ lease: lease.key }, 'log shipper lost its lease; another shipper takes over');
          shut();
          options.onLeaseLost();
          return;
        }
        queue = queue.slice(batch.length);
        settle(batch.length);
      } catch (error) {
        // Redis unreachable: keep the lines and retry; followers pause once the queue is long.
        logger.warn(
          { err: messageOf(error), queued: queue.length },
          'writing container logs failed; retrying',
        );
        await sleep(RETRY_MS);
      }
      if (isUnderPressure && queue.length < LOW_WATER) {
        isUnderPressure = false;
        options.onPressure(false);
      }
    }
  };

  const schedule = () => {
    if (flushing || isClosed) return;
    // setImmediate: lines arriving in the same I/O turn share one round trip, without adding latency.
    flushing = new Promise((resolve) => setImmediate(resolve)).then(loop).finally(() => {
      flushing = undefined;
      if (queue.length > 0) schedule();
    });
  };

  return {
    push(line) {
      if (isClosed) return;
      queue.push(line);
      pushed += 1;
      if (!isUnderPressure && queue.length > HIGH_WATER) {
        isUnderPressure = true;
        options.onPressure(true);
      }
      schedule();
    },
    drain() {
      if (settled >= pushed || isClosed) return Promise.resolve();
      return new Promise<void>((resolve) => waiters.push({ mark: pushed, resolve }));
    },
    get isUnderPressure() {
      return isUnderPressure;
    },
    close: shut,
  };
}
