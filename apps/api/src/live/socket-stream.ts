import type { FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import { isDomainError } from '@hostctl/domain';

/** Above this many unsent bytes a reader is too slow: we close rather than buffer without bound. */
const MAX_BUFFERED_BYTES = 1024 * 1024;
const HEARTBEAT_MS = 15_000;

/**
 * Runs a producer that emits JSON messages onto a WebSocket, with heartbeats for idle streams, a
 * bound on buffered output, and cancellation when the client goes away.
 */
export function streamOverSocket(
  socket: WebSocket,
  request: FastifyRequest,
  produce: (emit: (message: Record<string, unknown>) => void, signal: AbortSignal) => Promise<void>,
): void {
  const controller = new AbortController();
  const heartbeat = setInterval(() => socket.ping(), HEARTBEAT_MS);
  const stop = () => {
    clearInterval(heartbeat);
    controller.abort();
  };
  socket.on('close', stop);
  socket.on('error', stop);

  const emit = (message: Record<string, unknown>) => {
    if (socket.readyState !== socket.OPEN) return;
    if (socket.bufferedAmount > MAX_BUFFERED_BYTES) {
      socket.close(1013, 'reader too slow');
      stop();
      return;
    }
    socket.send(JSON.stringify(message));
  };

  produce(emit, controller.signal)
    .then(() => socket.close(1000, 'end'))
    .catch((error: unknown) => {
      if (isDomainError(error)) {
        emit({ type: 'error', code: error.code, detail: error.message });
        socket.close(error.code === 'not_found' ? 4404 : 4000, error.code);
      } else {
        request.log.error({ err: error }, 'stream failed');
        socket.close(1011, 'internal error');
      }
    })
    .finally(stop);
}
