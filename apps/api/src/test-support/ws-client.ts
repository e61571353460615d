import WebSocket from 'ws';

export interface WsResult {
  messages: Record<string, unknown>[];
  closeCode: number | undefined;
}

/** Opens a WebSocket and collects JSON messages; `until` decides when the test has seen enough. */
export function openSocket(url: string, headers: Record<string, string>) {
  const socket = new WebSocket(url, { headers });
  const messages: Record<string, unknown>[] = [];
  let closeCode: number | undefined;
  const closed = new Promise<void>((resolve) =>
    socket.on('close', (code) => ((closeCode = code), resolve())),
  );
  socket.on('message', (data: Buffer) =>
    messages.push(JSON.parse(data.toString()) as Record<string, unknown>),
  );
  const opened = new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('unexpected-response', (req, res) => {
      // Listening for this event makes us responsible for the request: end it or it stays open.
      req.destroy();
      reject(new Error(`upgrade refused with ${res.statusCode}`));
    });
    socket.once('error', reject);
  });
  return {
    socket,
    messages,
    opened,
    closed,
    get closeCode() {
      return closeCode;
    },
    async waitFor(predicate: (all: Record<string, unknown>[]) => boolean, timeoutMs = 10_000): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(messages)) {
        if (Date.now() > deadline) throw new Error(`timed out; got ${JSON.stringify(messages)}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
  };
}
