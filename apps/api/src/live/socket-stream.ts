import type { FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import { isDomainError, type ErrorCode } from '@hostctl/domain';
import type { StreamCheck } from './stream-guard.js';

/** Above this many unsent bytes a reader is too slow: we close rather than buffer without bound. */
const MAX_BUFFERED_BYTES = 1024 * 1024;
const HEARTBEAT_MS = 15_000;

/** Close codes in the private range, mirroring the HTTP status a plain request would get. */
const CLOSE_CODES: Partial<Record<ErrorCode, number>> = {
  unauthenticated: 4401,
  forbidden: 4403,
  not_found: 4404,
  operation_timeout: 4408,
  conflict: 4409,
  rate_limited: 4429,
  dependency_unavailable: 4503,
};

/** One WebSocket message: a JSON object, or an array of them where a route batches. */
type SocketMessage = Record<string, unknown> | readonly Record<string, unknown>[];

/**
 * Runs a producer that emits JSON messages onto a WebSocket, with heartbeats for idle streams, a
 * bound on buffered output, cancellation when the client goes away, and the credential re-check:
 * every `guard.everyMs` the check runs, and a failure ends the stream whatever the producer is
 * waiting on (the abort reaches its reads).
 */
export function streamOverSocket(
  socket: WebSocket,
  request: FastifyRequest,
  produce: (emit: (message: SocketMessage) => void, signal: AbortSignal) => Promise<void>,
  guard: { everyMs: number; check: StreamCheck },
): void {
  const controller = new AbortController();
  const heartbeat = setInterval(() => socket.ping(), HEARTBEAT_MS);
  let recheckTimer: NodeJS.Timeout | undefined;
  let finished = false;
  const stop = () => {
    clearInterval(heartbeat);
    clearTimeout(recheckTimer);
    controller.abort();
  };
  socket.on('close', stop);
  socket.on('error', stop);

  const emit = (message: SocketMessage) => {
    if (socket.readyState !== socket.OPEN) return;
    if (socket.bufferedAmount > MAX_BUFFERED_BYTES) {
      socket.close(1013, 'reader too slow');
      stop();
      return;
    }
    socket.send(JSON.stringify(message));
  };

  const fail = (error: unknown) => {
    if (finished) return;
    finished = true;
    if (isDomainError(error)) {
      emit({ type: 'error', code: error.code, detail: error.message });
      socket.close(CLOSE_CODES[error.code] ?? 4000, error.code);
    } else {
      request.log.error({ err: error }, 'stream failed');
      socket.close(1011, 'internal error');
    }
    stop();
  };

  // Sequential, never overlapping: the next check is armed only after the previous one settled.
  const arm = () => {
    recheckTimer = setTimeout(() => {
      guard.check().then(() => {
        if (!controller.signal.aborted) arm();
      }, fail);
    }, guard.everyMs);
  };
  arm();

  produce(emit, controller.signal)
    .then(() => {
      if (finished) return;
      finished = true;
      socket.close(1000, 'end');
    })
    .catch(fail)
    .finally(stop);
}
