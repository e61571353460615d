import type { FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import { DomainError } from '@hostctl/domain';
import { EXEC_PING_MS } from '@hostctl/queue';
import type { ExecInput, ExecRelay } from './exec-relay.js';
import { streamOverSocket } from './socket-stream.js';
import type { StreamCheck } from './stream-guard.js';

/** A worker that has not opened the exec by then never will (none running, or all slots taken). */
const READY_WITHIN_MS = 20_000;
/** Bounds of one client frame: a paste is cut into frames of at most this much. */
const MAX_STDIN_CHARS = 64 * 1024;
const MAX_TERMINAL_SIDE = 1000;

/**
 * The terminal's WebSocket (docs/jobs.md#terminal): client frames `{type: "stdin", data}` and
 * `{type: "resize", cols, rows}` go to the worker, its `ready`, `output` and `exit` come back. Runs
 * on the log follower's socket (streamOverSocket): heartbeats, the bound on unsent output and the
 * credential re-check, so a revoked key closes the terminal within STREAM_RECHECK_MS. No input for
 * `idleMs` closes it too (4408).
 */
export function relayTerminal(
  socket: WebSocket,
  request: FastifyRequest,
  options: {
    relay: ExecRelay;
    start: () => Promise<{ id: string }>;
    idleMs: number;
    onOpen?: (container: string) => void;
    onEnd: () => Promise<void>;
    keepAlive: () => Promise<void>;
    guard: { everyMs: number; check: StreamCheck };
  },
): void {
  const { relay } = options;
  let sessionId: string | undefined;
  let lastInput = Date.now();
  const pending: ExecInput[] = [];
  const forward = (input: ExecInput) => {
    if (sessionId === undefined) pending.push(input);
    else
      relay
        .send(sessionId, input)
        .catch((error: unknown) => request.log.warn({ err: error }, 'terminal input lost'));
  };
  socket.on('message', (raw, isBinary) => {
    const input = parseFrame(isBinary || !Buffer.isBuffer(raw) ? undefined : raw.toString('utf8'));
    if (!input) return;
    if (input.type === 'stdin') lastInput = Date.now();
    forward(input);
  });

  streamOverSocket(
    socket,
    request,
    async (emit, signal) => {
      const opened = Date.now();
      let ready = false;
      const session = await options.start();
      sessionId = session.id;
      for (const input of pending.splice(0)) forward(input);
      const ping = setInterval(() => {
        forward({ type: 'ping' });
        options.keepAlive().catch(() => undefined);
      }, EXEC_PING_MS);
      try {
        await relay.follow(
          session.id,
          (message) => {
            if (message.type === 'ready') {
              ready = true;
              options.onOpen?.(message.container);
            }
            if (message.type === 'error') throw new DomainError('conflict', message.detail);
            emit(message);
          },
          signal,
          {
            everyMs: Math.min(options.idleMs, 2000),
            run: async () => {
              if (!ready && Date.now() - opened > READY_WITHIN_MS)
                throw new DomainError(
                  'dependency_unavailable',
                  'no worker opened the terminal; retry shortly',
                );
              if (Date.now() - lastInput >= options.idleMs)
                throw new DomainError(
                  'operation_timeout',
                  `the terminal received no input for ${Math.round(options.idleMs / 1000)} s (EXEC_IDLE_TIMEOUT_MS) and was closed`,
                );
            },
          },
        );
      } finally {
        clearInterval(ping);
        await relay.send(session.id, { type: 'close' }).catch(() => undefined);
        await options.onEnd().catch(() => undefined);
      }
    },
    options.guard,
  );
}

function parseFrame(text: string | undefined): ExecInput | undefined {
  if (text === undefined) return undefined;
  let frame: unknown;
  try {
    frame = JSON.parse(text);
  } catch {
    return undefined;
  }
  const value = frame as { type?: unknown; data?: unknown; cols?: unknown; rows?: unknown };
  if (value.type === 'stdin' && typeof value.data === 'string' && value.data.length <= MAX_STDIN_CHARS)
    return { type: 'stdin', data: value.data };
  if (value.type === 'resize' && isSide(value.cols) && isSide(value.rows))
    return { type: 'resize', cols: value.cols, rows: value.rows };
  return undefined;
}

const isSide = (value: unknown): value is number =>
  Number.isInteger(value) && (value as number) >= 1 && (value as number) <= MAX_TERMINAL_SIDE;
