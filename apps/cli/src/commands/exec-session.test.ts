import { EventEmitter } from 'node:events';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import { CliError, EXIT } from '../exit-codes.js';
import { relayTerminal, type TerminalIo } from './exec-session.js';

// The CLI's side of a terminal (docs/jobs.md#terminal) against a WebSocket server that plays the
// API: raw mode and window sizes on a TTY, frames relayed, close codes mapped onto docs/ci.md.
let server: WebSocketServer;
let port: number;
let onConnection: (socket: WebSocket) => void = () => undefined;

beforeAll(async () => {
  server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise((resolve) => server.once('listening', resolve));
  port = (server.address() as { port: number }).port;
  server.on('connection', (socket) => onConnection(socket));
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

function fakeTty() {
  const stdin = Object.assign(new PassThrough(), { isTTY: true, rawModes: [] as boolean[] });
  const tty = Object.assign(stdin, { setRawMode: (raw: boolean) => stdin.rawModes.push(raw) });
  const stdout = Object.assign(new PassThrough(), { columns: 80, rows: 24 });
  const winch = new EventEmitter();
  const io: TerminalIo = {
    stdin: tty,
    stdout,
    onResize: (listener) => {
      winch.on('resize', listener);
      return () => winch.off('resize', listener);
    },
  };
  return { io, tty, stdout, winch };
}

const url = () => new URL(`ws://127.0.0.1:${port}/api/services/x/exec`);

describe('hostctl exec on a TTY', () => {
  it('sends raw keystrokes and window sizes, prints the output, and exits with the remote code', async () => {
    const frames: unknown[] = [];
    const { io, tty, stdout, winch } = fakeTty();
    onConnection = (socket) => {
      socket.on('message', (data: Buffer) => {
        const frame = JSON.parse(data.toString()) as { type: string; data?: string };
        frames.push(frame);
        if (frame.type === 'resize' && frames.length === 1) {
          stdout.columns = 132;
          winch.emit('resize');
          tty.write('ls\r');
        }
        if (frame.type === 'stdin') {
          socket.send(JSON.stringify({ type: 'output', data: '\u001b[1mbin\u001b[0m\r\n' }));
          socket.send(JSON.stringify({ type: 'exit', exit_code: 4 }));
          socket.close(1000);
        }
      });
    };
    let printed = '';
    stdout.on('data', (chunk: Buffer) => (printed += chunk.toString()));
    const code = await relayTerminal(url(), 'Bearer t', io, () => undefined);
    expect(code).toBe(4);
    expect(frames).toEqual([
      { type: 'resize', cols: 80, rows: 24 },
      { type: 'resize', cols: 132, rows: 24 },
      { type: 'stdin', data: 'ls\r' },
    ]);
    // Byte for byte: a terminal's escape sequences are the point.
    expect(printed).toBe('\u001b[1mbin\u001b[0m\r\n');
    expect(tty.rawModes).toEqual([true, false]);
    expect(winch.listenerCount('resize')).toBe(0);
  });

  it.each([
    [4401, EXIT.auth],
    [4403, EXIT.auth],
    [4408, EXIT.timedOut],
    [4409, EXIT.failed],
  ])('a close with %i exits %i and leaves raw mode', async (closeCode, exit) => {
    const { io, tty } = fakeTty();
    onConnection = (socket) => {
      socket.send(JSON.stringify({ type: 'error', code: 'x', detail: 'why it closed' }));
      socket.close(closeCode);
    };
    const error = await relayTerminal(url(), 'Bearer t', io, () => undefined).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CliError);
    expect((error as CliError).exitCode).toBe(exit);
    expect((error as CliError).message).toContain('why it closed');
    expect(tty.rawModes.at(-1)).toBe(false);
  });
});
