import { StringDecoder } from 'node:string_decoder';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { RUN_OUTPUT_STREAM_MAXLEN } from '@hostctl/queue';
import type { ContainerTelemetry, LogFollow, OutputStream } from '../adapters/telemetry.js';
import { MAX_LINE_BYTES } from '../logs/log-lines.js';
import { messageOf } from '../pipeline/step-errors.js';
import { createStreamMasker } from './stream-masker.js';

/** Most output waiting for Redis (the stored log's bound); beyond it the oldest is dropped. */
const LIVE_PENDING_MAX_BYTES = 256 * 1024;
/** Chunks arriving together are written in one round trip. */
const FLUSH_MS = 100;
/** How long the rest of the output may take to arrive once the container stopped. */
const DRAIN_WAIT_MS = 2000;
/** A run lasts at most an hour (docs/jobs.md#limits); its stream outlives it a little. */
const LIVE_TTL_S = 2 * 3600;
/** Once ended, the stored output is the record: the stream stays only for late followers. */
const ENDED_TTL_S = 10 * 60;

export interface LiveOutput {
  /** Follows the started container's output into the run's stream. Never throws. */
  attach(containerId: string): Promise<void>;
  /** Once the container stopped: the rest of its output, masked, written. Never throws. */
  drain(): Promise<void>;
  /** Once the run is recorded final: the entry followers stop at. Never throws. */
  end(status: string, exitCode: number | null): Promise<void>;
}

interface LiveOutputDeps {
  telemetry: Pick<ContainerTelemetry, 'followLogs'>;
  redis: Redis;
  /** runOutputStreamKey(prefix, runId). */
  key: string;
  /** The values masked in the stored output too (run.processor.ts). */
  secrets: readonly string[];
  logger: Logger;
}

interface Pending {
  ts: string;
  stream: OutputStream;
  message: string;
}

/**
 * Ships a run's output while it runs (docs/jobs.md#output) into its Redis stream, the mechanism of
 * the application log (adr/0006): the API follows it with XREAD BLOCK. Every chunk is masked before
 * it leaves the worker, a secret split across chunks included (stream-masker.ts); entries are
 * bounded like log lines and the stream is capped. Redis being slow or gone never fails the run:
 * what cannot be written is dropped with a note, and the stored output is unaffected.
 */
export function createLiveOutput(deps: LiveOutputDeps): LiveOutput {
  const { redis, key, logger } = deps;
  const maskers = { stdout: createStreamMasker(deps.secrets), stderr: createStreamMasker(deps.secrets) };
  const decoders = { stdout: new StringDecoder('utf8'), stderr: new StringDecoder('utf8') };
  const controller = new AbortController();
  let follow: LogFollow | undefined;
  let queue: Pending[] = [];
  let queuedBytes = 0;
  let droppedBytes = 0;
  let timer: NodeJS.Timeout | undefined;
  let flushing = Promise.resolve();
  let hasWarned = false;

  const warn = (error: unknown) => {
    if (hasWarned) return;
    hasWarned = true;
    logger.warn({ key, err: messageOf(error) }, 'run output cannot be streamed; the stored output is kept');
  };

  const flush = async () => {
    const batch = queue;
    const dropped = droppedBytes;
    queue = [];
    queuedBytes = 0;
    droppedBytes = 0;
    if (batch.length === 0 && dropped === 0) return;
    const multi = redis.multi();
    const add = (entry: Pending) =>
      multi.xadd(
        key,
        'MAXLEN',
        '~',
        String(RUN_OUTPUT_STREAM_MAXLEN),
        '*',
        'ts',
        entry.ts,
        'stream',
        entry.stream,
        'message',
        entry.message,
      );
    if (dropped > 0)
      add({
        ts: new Date().toISOString(),
        stream: 'stderr',
        message: `[hostctl: ${dropped} bytes of output were not streamed; the run's stored output has its end]\n`,
      });
    for (const entry of batch) add(entry);
    multi.expire(key, LIVE_TTL_S);
    await multi.exec().catch(warn);
  };

  const flushNow = async () => {
    clearTimeout(timer);
    timer = undefined;
    flushing = flushing.then(flush);
    await flushing;
  };

  const enqueue = (stream: OutputStream, text: string) => {
    const ts = new Date().toISOString();
    for (const message of pieces(text, MAX_LINE_BYTES)) {
      queue.push({ ts, stream, message });
      queuedBytes += Buffer.byteLength(message);
    }
    // Redis slower than the command: keep the newest, as the stored output keeps its end.
    while (queuedBytes > LIVE_PENDING_MAX_BYTES && queue.length > 1) {
      const bytes = Buffer.byteLength(queue.shift()?.message ?? '');
      queuedBytes -= bytes;
      droppedBytes += bytes;
    }
    timer ??= setTimeout(() => {
      timer = undefined;
      flushing = flushing.then(flush);
    }, FLUSH_MS);
  };

  const onChunk = (stream: OutputStream, chunk: Buffer) => {
    const text = maskers[stream].push(decoders[stream].write(chunk));
    if (text !== '') enqueue(stream, text);
  };

  return {
    async attach(containerId) {
      try {
        follow = await deps.telemetry.followLogs(
          containerId,
          { timestamps: false },
          onChunk,
          controller.signal,
        );
      } catch (error) {
        warn(error);
      }
    },

    async drain() {
      if (follow) await Promise.race([follow.done, sleep(DRAIN_WAIT_MS, undefined, { ref: false })]);
      controller.abort();
      for (const stream of ['stdout', 'stderr'] as const) {
        const rest = maskers[stream].push(decoders[stream].end()) + maskers[stream].end();
        if (rest !== '') enqueue(stream, rest);
      }
      await flushNow();
    },

    async end(status, exitCode) {
      controller.abort();
      await flushNow();
      await redis
        .multi()
        .xadd(
          key,
          '*',
          'ts',
          new Date().toISOString(),
          'end',
          status,
          'exit_code',
          exitCode === null ? '' : String(exitCode),
        )
        .expire(key, ENDED_TTL_S)
        .exec()
        .catch(warn);
    },
  };
}

/** The text in pieces of at most `maxBytes`, never splitting a character. */
function pieces(text: string, maxBytes: number): string[] {
  if (Buffer.byteLength(text) <= maxBytes) return [text];
  const out: string[] = [];
  let current = '';
  let size = 0;
  for (const char of text) {
    const bytes = Buffer.byteLength(char);
    if (size + bytes > maxBytes) {
      out.push(current);
      current = '';
      size = 0;
    }
    current += char;
    size += bytes;
  }
  if (current !== '') out.push(current);
  return out;
}
