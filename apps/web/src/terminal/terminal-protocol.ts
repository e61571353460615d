/**
 * The terminal WebSocket's frames and close codes (docs/jobs.md#terminal) in the dashboard's terms:
 * what the server sends, what the browser sends back, and what each ending means to a person.
 */

type ServerFrame =
  | { type: 'ready'; container: string }
  | { type: 'output'; data: string }
  | { type: 'exit'; exitCode: number }
  | { type: 'error'; code: string; detail: string };

/** A frame from the API, or null for anything this dashboard does not know (ignored, not fatal). */
export function parseServerFrame(message: Record<string, unknown>): ServerFrame | null {
  switch (message.type) {
    case 'ready':
      return typeof message.container === 'string' ? { type: 'ready', container: message.container } : null;
    case 'output':
      return typeof message.data === 'string' ? { type: 'output', data: message.data } : null;
    case 'exit':
      return typeof message.exit_code === 'number' ? { type: 'exit', exitCode: message.exit_code } : null;
    case 'error':
      return {
        type: 'error',
        code: typeof message.code === 'string' ? message.code : 'error',
        detail: typeof message.detail === 'string' ? message.detail : '',
      };
    default:
      return null;
  }
}

/** The API drops a stdin frame over 64 Ki characters: a large paste goes as several. */
const STDIN_MAX_CHARS = 65_536;

export function stdinFrames(data: string): string[] {
  const frames: string[] = [];
  let start = 0;
  while (start < data.length) {
    let end = Math.min(start + STDIN_MAX_CHARS, data.length);
    // Never cut a surrogate pair in two: each half alone is not valid UTF-8 on the other side.
    const last = data.charCodeAt(end - 1);
    if (end < data.length && last >= 0xd800 && last <= 0xdbff) end -= 1;
    frames.push(JSON.stringify({ type: 'stdin', data: data.slice(start, end) }));
    start = end;
  }
  return frames;
}

/** A resize frame, its sizes kept in the API's 1–1000 (a tiny or huge window is not an error). */
export function resizeFrame(cols: number, rows: number): string {
  const bound = (value: number) => Math.min(1000, Math.max(1, Math.round(value) || 1));
  return JSON.stringify({ type: 'resize', cols: bound(cols), rows: bound(rows) });
}

/** The terminal's address: one `cmd` per argument, none for the default shell. */
export function terminalPath(serviceId: string, component: string): string {
  const query = component ? `?${new URLSearchParams({ component })}` : '';
  return `/api/services/${encodeURIComponent(serviceId)}/exec${query}`;
}

/**
 * Why the socket closed, in words. 1000 follows an `exit` frame (the command ended, said apart);
 * 1006 before the socket opened is a refused handshake, whose status a browser cannot read: the
 * preflight GET has already passed, so what is left is a bound (429) or a session that just ended.
 */
export function closeReason(code: number, opened: boolean): string {
  switch (code) {
    case 1000:
    case 1005:
      return 'The terminal closed.';
    case 4401:
      return 'You were signed out, or your session or key was revoked, so the terminal was closed. Sign in again to open a new one.';
    case 4403:
      return 'Your role no longer allows terminals into this service, so the terminal was closed.';
    case 4404:
      return 'The service was deleted or is no longer yours to see, so the terminal was closed.';
    case 4408:
      return 'The terminal was closed because nothing was typed for too long. Connect again to continue.';
    case 4409:
      return 'No running container of this component could take the terminal: start the service or pick another component.';
    case 4429:
      return 'Too many terminals are open for this service or customer. Close one and try again.';
    case 4503:
      return 'No worker took the terminal within 20 seconds: the workers may be down or busy. Try again in a moment.';
    default:
      return opened
        ? `The connection to the terminal was lost (code ${code}).`
        : 'The terminal could not be opened: too many terminals may be open for this service or customer, or your session ended. Close another terminal or sign in again, then retry.';
  }
}
