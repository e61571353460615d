import WebSocket from 'ws';
import { CliError, EXIT } from '../exit-codes.js';

/** The local side of a terminal: the process's stdin and stdout unless a test brings its own. */
export interface TerminalIo {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (raw: boolean) => unknown };
  stdout: NodeJS.WritableStream & { columns?: number; rows?: number };
  /** Subscribes to window size changes (SIGWINCH); returns the unsubscribe. */
  onResize: (listener: () => void) => () => void;
}

/** Ctrl-D: the end of piped input, said to the remote TTY's line discipline. */
const END_OF_INPUT = '\u0004';

/**
 * Relays one terminal (docs/jobs.md#terminal): raw mode and window size when stdin is a TTY, piped
 * input otherwise (its end sent as Ctrl-D); the remote output goes to stdout byte for byte. Resolves
 * with the remote exit code; refusals and closes map onto the CLI's exit codes (docs/ci.md).
 */
export function relayTerminal(
  url: URL,
  authorization: string,
  io: TerminalIo,
  err: (line: string) => void,
): Promise<number> {
  const socket = new WebSocket(url, { headers: { authorization } });
  const interactive = io.stdin.isTTY === true && typeof io.stdin.setRawMode === 'function';
  let exitCode: number | null | undefined;
  let closeDetail = '';
  const cleanups: (() => void)[] = [];
  const send = (frame: object) => {
    if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(frame));
  };
  const sendSize = () => {
    if (io.stdout.columns && io.stdout.rows)
      send({ type: 'resize', cols: io.stdout.columns, rows: io.stdout.rows });
  };

  socket.on('open', () => {
    if (interactive) {
      io.stdin.setRawMode?.(true);
      cleanups.push(() => io.stdin.setRawMode?.(false));
      sendSize();
      cleanups.push(io.onResize(sendSize));
    }
    const onData = (chunk: Buffer | string) => send({ type: 'stdin', data: chunk.toString() });
    const onEnd = () => send({ type: 'stdin', data: END_OF_INPUT });
    io.stdin.on('data', onData);
    io.stdin.on('end', onEnd);
    cleanups.push(() => {
      io.stdin.off('data', onData);
      io.stdin.off('end', onEnd);
      io.stdin.pause();
    });
    io.stdin.resume();
  });
  socket.on('message', (data: Buffer) => {
    const frame = parseFrame(data.toString());
    if (frame?.type === 'output' && typeof frame.data === 'string') io.stdout.write(frame.data);
    else if (frame?.type === 'exit') exitCode = typeof frame.exit_code === 'number' ? frame.exit_code : null;
    else if (frame?.type === 'error' && typeof frame.detail === 'string') closeDetail = frame.detail;
  });

  return new Promise<number>((resolve, reject) => {
    let isSettled = false;
    const settle = (result: number | CliError) => {
      if (isSettled) return;
      isSettled = true;
      for (const cleanup of cleanups.splice(0)) cleanup();
      if (result instanceof CliError) reject(result);
      else resolve(result);
    };
    socket.once('unexpected-response', (_request, response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk.toString()));
      response.on('end', () => {
        socket.terminate();
        settle(refusal(response.statusCode ?? 0, body));
      });
    });
    socket.once('error', (error) =>
      settle(new CliError(`the terminal failed: ${error.message}`, EXIT.failed)),
    );
    socket.once('close', (code) => {
      if (code === 1000 && exitCode !== undefined) {
        if (exitCode === null) err('hostctl: the terminal ended without an exit code');
        return settle(exitCode ?? EXIT.failed);
      }
      const why = closeDetail || `closed (${code})`;
      if (code === 4401 || code === 4403)
        return settle(
          new CliError(`the terminal closed: the credential no longer allows it (${why})`, EXIT.auth),
        );
      if (code === 4408) return settle(new CliError(`the terminal closed: ${why}`, EXIT.timedOut));
      settle(new CliError(`the terminal closed: ${why}`, EXIT.failed));
    });
  });
}

/** A refused handshake: 401/403 exit 5, 400 exit 2 (a bad component or command), else 1. */
function refusal(status: number, body: string): CliError {
  const detail = (parseFrame(body)?.detail as string | undefined) ?? `HTTP ${status}`;
  if (status === 401 || status === 403)
    return new CliError(`the API refused the terminal (${status}): ${detail}`, EXIT.auth);
  if (status === 400) return new CliError(`the API refused the terminal (400): ${detail}`, EXIT.usage);
  return new CliError(`the API refused the terminal (${status}): ${detail}`, EXIT.failed);
}

function parseFrame(text: string): Record<string, unknown> | null {
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
