import { WebSocket } from 'ws';

/**
 * A client of the terminal's WebSocket (docs/jobs.md#terminal), as a browser or `hostctl exec` is:
 * the frames it received, its output, how it closed.
 */
export interface Terminal {
  socket: WebSocket;
  frames: Record<string, unknown>[];
  output: () => string;
  closed: Promise<{ code: number; reason: string }>;
  waitFor: (predicate: (frames: Record<string, unknown>[]) => boolean, ms?: number) => Promise<void>;
}

function execUrl(apiUrl: string, id: string, cmd: string[] = []): string {
  const query = cmd.map((arg) => `cmd=${encodeURIComponent(arg)}`).join('&');
  return `${apiUrl.replace(/^http/, 'ws')}/api/services/${id}/exec${query ? `?${query}` : ''}`;
}

/** Opens a terminal; resolves once the handshake is answered (rejects with the HTTP status when refused). */
export function openTerminal(apiUrl: string, key: string, id: string, cmd: string[] = []): Promise<Terminal> {
  const socket = new WebSocket(execUrl(apiUrl, id, cmd), { headers: { authorization: `Bearer ${key}` } });
  const frames: Record<string, unknown>[] = [];
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    socket.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  socket.on('message', (data: Buffer) => frames.push(JSON.parse(data.toString()) as Record<string, unknown>));
  const terminal: Terminal = {
    socket,
    frames,
    closed,
    output: () =>
      frames
        .filter((f) => f.type === 'output')
        .map((f) => f.data as string)
        .join(''),
    waitFor: async (predicate, ms = 20_000) => {
      const deadline = Date.now() + ms;
      while (!predicate(frames)) {
        if (Date.now() > deadline) throw new Error(`timed out; frames: ${JSON.stringify(frames)}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
  };
  return new Promise((resolve, reject) => {
    socket.once('open', () => resolve(terminal));
    socket.once('unexpected-response', (_request, response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk.toString()));
      response.on('end', () => reject(Object.assign(new Error(body), { status: response.statusCode, body })));
    });
    socket.once('error', reject);
  });
}

export const isReady = (frames: Record<string, unknown>[]) => frames.some((f) => f.type === 'ready');
