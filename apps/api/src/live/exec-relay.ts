import type { Redis } from 'ioredis';
import { EXEC_STREAM_TTL_SECONDS, execStreamKeys } from '@hostctl/queue';
import { fieldsOf, withStreamReader } from './log-reader.js';

/** What the API relays to the worker holding a terminal's exec (docs/jobs.md#terminal). */
export type ExecInput =
  | { type: 'stdin'; data: string }
  | { type: 'resize'; cols: number; rows: number }
  | { type: 'ping' }
  | { type: 'close' };

/** What the worker relays back: the container it opened, output, then the exit or an error. */
export type ExecOutput =
  | { type: 'ready'; container: string }
  | { type: 'output'; data: string }
  | { type: 'exit'; exit_code: number | null }
  | { type: 'error'; detail: string };

export interface ExecRelay {
  send(sessionId: string, input: ExecInput): Promise<void>;
  /** Emits the worker's messages until its exit or error message, or until the signal aborts. */
  follow(
    sessionId: string,
    emit: (message: ExecOutput) => void,
    signal: AbortSignal,
    /** Called after every read (at most `everyMs` apart): throws to end the terminal (idle, no worker). */
    check: { everyMs: number; run: () => Promise<void> },
  ): Promise<void>;
}

/**
 * The API's side of a terminal: two Redis streams per terminal (execStreamKeys), since the API never
 * talks to Docker. Any replica can serve the socket; one worker holds the exec.
 */
export function createExecRelay(redis: Redis, prefix: string): ExecRelay {
  return {
    async send(sessionId, input) {
      const { input: key } = execStreamKeys(prefix, sessionId);
      const fields: string[] = ['t', input.type];
      if (input.type === 'stdin') fields.push('d', input.data);
      if (input.type === 'resize') fields.push('c', String(input.cols), 'r', String(input.rows));
      await redis
        .multi()
        .xadd(key, 'MAXLEN', '~', 1000, '*', ...fields)
        .expire(key, EXEC_STREAM_TTL_SECONDS)
        .exec();
    },

    async follow(sessionId, emit, signal, check) {
      const { output: key } = execStreamKeys(prefix, sessionId);
      let lastId = '0-0';
      await withStreamReader(redis, signal, async (read) => {
        while (!signal.aborted) {
          const rows = await read(key, lastId, check.everyMs);
          await check.run();
          for (const [id, raw] of rows) {
            lastId = id;
            const message = toOutput(fieldsOf(raw));
            if (!message) continue;
            emit(message);
            if (message.type === 'exit' || message.type === 'error') return;
          }
        }
      });
    },
  };
}

function toOutput(fields: Map<string, string>): ExecOutput | undefined {
  switch (fields.get('t')) {
    case 'ready':
      return { type: 'ready', container: fields.get('container') ?? '' };
    case 'output':
      return { type: 'output', data: fields.get('d') ?? '' };
    case 'exit': {
      const code = fields.get('code');
      return { type: 'exit', exit_code: code === undefined || code === '' ? null : Number(code) };
    }
    case 'error':
      return { type: 'error', detail: fields.get('detail') ?? 'the terminal failed' };
    default:
      return undefined;
  }
}
