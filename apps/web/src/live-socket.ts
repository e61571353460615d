/**
 * A same-origin WebSocket carrying JSON messages, or arrays of them (the session cookie
 * authenticates it). Returns a
 * function that closes it. Messages that are not JSON objects are ignored rather than crashing
 * the view.
 */
export function openJsonSocket(
  path: string,
  handlers: { onMessage: (message: Record<string, unknown>) => void; onClose?: (code: number) => void },
): () => void {
  const scheme = window.location.protocol === 'https:' ? 'wss' : 'ws';
  const socket = new WebSocket(`${scheme}://${window.location.host}${path}`);
  let closedByUs = false;
  socket.onmessage = (event: MessageEvent) => {
    if (typeof event.data !== 'string') return;
    let message: unknown;
    try {
      message = JSON.parse(event.data);
    } catch {
      return;
    }
    // A batched stream (the logs' batch=true) sends arrays: each element is one message.
    for (const item of Array.isArray(message) ? (message as unknown[]) : [message]) {
      if (typeof item === 'object' && item !== null) handlers.onMessage(item as Record<string, unknown>);
    }
  };
  socket.onclose = (event) => {
    if (!closedByUs) handlers.onClose?.(event.code);
  };
  return () => {
    closedByUs = true;
    socket.close(1000);
  };
}

/** A string field of a socket message, or the fallback when it is missing or not a string. */
export function textOf<T extends string | null>(
  message: Record<string, unknown>,
  key: string,
  fallback: T,
): string | T {
  const value = message[key];
  return typeof value === 'string' ? value : fallback;
}
