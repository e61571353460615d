import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import { fakeApi, run, TOKEN } from '../test-support/fake-api.js';

/**
 * `logs --follow` over a real WebSocket: a local server plays the API's log stream (what it sends
 * and how it closes is up to each test), so the handshake header, message handling and close codes
 * are exercised through the real protocol.
 */
const SERVICE = '3f1c2a4e-1111-4222-8333-444455556666';
let server: Server;
let sockets: WebSocketServer;
let baseUrl: string;
let behaviour: (socket: WebSocket, request: IncomingMessage) => void = () => undefined;
const handshakes: IncomingMessage[] = [];

beforeAll(async () => {
  server = createServer((_request, response) => response.writeHead(404).end());
  sockets = new WebSocketServer({ noServer: true });
  server.on('upgrade', (request: IncomingMessage, socket, head) => {
    handshakes.push(request);
    if (request.headers.authorization !== `Bearer ${TOKEN}`) {
      socket.end('HTTP/1.1 401 Unauthorized\r\ncontent-type: application/problem+json\r\n\r\n');
      return;
    }
    sockets.handleUpgrade(request, socket, head, (ws) => behaviour(ws, request));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  sockets.close();
  await new Promise((resolve) => server.close(resolve));
});

const api = () => fakeApi({ [`GET /api/services/${SERVICE}`]: [200, { id: SERVICE, name: 'web' }] });
const entry = (stream: string, message: string) =>
  JSON.stringify({ timestamp: '2026-01-01T00:00:00.000Z', stream, message });

describe('logs --follow', () => {
  it('prints stdout lines to stdout and stderr lines to stderr until the stream ends', async () => {
    behaviour = (socket) => {
      socket.send(entry('stdout', 'out 1'));
      socket.send(entry('stderr', 'err 1'));
      socket.close(1000, 'end');
    };
    const result = await run(['logs', SERVICE, '--follow', '--tail', '5'], api().fetchImpl, {
      HOSTCTL_URL: baseUrl,
      HOSTCTL_TOKEN: TOKEN,
    });
    expect(result).toMatchObject({ code: 0, stdout: 'out 1', stderr: 'err 1' });
    const url = new URL(handshakes.at(-1)?.url ?? '', baseUrl);
    expect(url.pathname).toBe(`/api/services/${SERVICE}/logs`);
    expect(Object.fromEntries(url.searchParams)).toEqual({ follow: 'true', tail: '5' });
  });

  it('with --json prints one entry per line', async () => {
    behaviour = (socket) => {
      socket.send(entry('stdout', 'a'));
      socket.send(entry('stdout', 'b'));
      socket.close(1000);
    };
    const result = await run(['logs', SERVICE, '--follow', '--json'], api().fetchImpl, {
      HOSTCTL_URL: baseUrl,
      HOSTCTL_TOKEN: TOKEN,
    });
    expect(
      result.stdout.split('\n').map((line) => (JSON.parse(line) as { message: string }).message),
    ).toEqual(['a', 'b']);
  });

  it('exits 5 when the stream ends because the credential did (close 4401), with the reason', async () => {
    behaviour = (socket) => {
      socket.send(
        JSON.stringify({ type: 'error', code: 'unauthenticated', detail: 'the API key was revoked' }),
      );
      socket.close(4401, 'unauthenticated');
    };
    const result = await run(['logs', SERVICE, '--follow'], api().fetchImpl, {
      HOSTCTL_URL: baseUrl,
      HOSTCTL_TOKEN: TOKEN,
    });
    expect(result.code).toBe(5);
    expect(result.stderr).toContain('log stream closed (4401): the API key was revoked');
  });

  it('exits 1 when the service goes away (close 4404)', async () => {
    behaviour = (socket) => socket.close(4404, 'not_found');
    const result = await run(['logs', SERVICE, '--follow'], api().fetchImpl, {
      HOSTCTL_URL: baseUrl,
      HOSTCTL_TOKEN: TOKEN,
    });
    expect(result.code).toBe(1);
  });

  it('exits 5 when the handshake is refused with 401, without printing the token', async () => {
    const wrong = 'hsk_wrong_token_value';
    const result = await run(['logs', SERVICE, '--follow'], api().fetchImpl, {
      HOSTCTL_URL: baseUrl,
      HOSTCTL_TOKEN: wrong,
    });
    expect(result.code).toBe(5);
    expect(result.stderr).toContain('the API refused to stream logs (401');
    expect(result.stderr).not.toContain(wrong);
  });
});

describe('logs --follow against a hostile stream', () => {
  const ESC = '\u001b';
  it('prints no terminal control characters from a log line, escaped instead, in text and --json', async () => {
    // A deployment's own output decides these lines: ESC ] 0 sets the window title, CSI 2J clears
    // the screen, CR rewrites the visible line of a CI log, U+009B is an 8-bit CSI.
    const hostile = `${ESC}]0;owned${String.fromCharCode(7)}${ESC}[2J\rOK: all tests passed\u009b31m`;
    behaviour = (socket) => {
      socket.send(entry('stdout', hostile));
      socket.send(entry('stderr', hostile));
      socket.close(1000);
    };
    const env = { HOSTCTL_URL: baseUrl, HOSTCTL_TOKEN: TOKEN };
    const text = await run(['logs', SERVICE, '--follow'], api().fetchImpl, env);
    expect(text.code).toBe(0);
    const escaped = '\\u001b]0;owned\\u0007\\u001b[2J\\u000dOK: all tests passed\\u009b31m';
    expect(text.stdout).toBe(escaped);
    expect(text.stderr).toBe(escaped);
    const json = await run(['logs', SERVICE, '--follow', '--json'], api().fetchImpl, env);
    for (const line of json.stdout.split('\n')) {
      expect(line).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
      // Still JSON, and still the same message: the escape is JSON's own.
      expect((JSON.parse(line) as { message: string }).message).toBe(hostile);
    }
  });

  it('ends with exit 1 and a message, not a crash, on a frame that is not a log entry', async () => {
    for (const frame of ['not json', 'null', '42', JSON.stringify({ message: 7 })]) {
      behaviour = (socket) => socket.send(frame);
      const result = await run(['logs', SERVICE, '--follow'], api().fetchImpl, {
        HOSTCTL_URL: baseUrl,
        HOSTCTL_TOKEN: TOKEN,
      });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('sent a frame that is not a log entry');
    }
  });
});

describe('logs and events without --follow', () => {
  it('--since must be a timestamp', async () => {
    const result = await run(['logs', SERVICE, '--since', 'yesterday'], api().fetchImpl);
    expect(result.code).toBe(2);
  });

  it('escapes terminal control characters in API text: event messages and problem details', async () => {
    const fake = fakeApi({
      'GET /api/services': [200, { data: [{ id: SERVICE, name: 'web' }], total: 1, page: 1, per_page: 100 }],
      [`GET /api/services/${SERVICE}/events`]: [
        200,
        { data: [{ type: 'deploy', status: 'info', message: 'a\u001b[8mb', timestamp: 't' }] },
      ],
      [`GET /api/services/${SERVICE}/logs`]: [
        409,
        { status: 409, code: 'conflict', title: 'Conflict', detail: 'x\u001b]52;c;Zm9v\u0007y' },
      ],
    });
    const events = await run(['events', 'web'], fake.fetchImpl);
    expect(events.stdout).toContain('a\\u001b[8mb');
    const logs = await run(['logs', 'web'], fake.fetchImpl);
    expect(logs.code).toBe(1);
    expect(logs.stderr).toContain('x\\u001b]52;c;Zm9v\\u0007y');
    expect(`${events.stdout}${logs.stderr}`).not.toMatch(/[\u0000-\u0009\u000b-\u001f]/);
  });

  it('events prints the timeline as a table', async () => {
    const fake = fakeApi({
      'GET /api/services': [200, { data: [{ id: SERVICE, name: 'web' }], total: 1, page: 1, per_page: 100 }],
      [`GET /api/services/${SERVICE}/events`]: [
        200,
        {
          data: [
            { type: 'deploy', status: 'success', message: 'Deployed', timestamp: '2026-01-01T00:00:00Z' },
          ],
        },
      ],
    });
    const result = await run(['events', 'web'], fake.fetchImpl);
    expect(result.code).toBe(0);
    expect(result.stdout.split('\n')).toEqual([
      'TIMESTAMP             TYPE    STATUS   MESSAGE',
      '2026-01-01T00:00:00Z  deploy  success  Deployed',
    ]);
  });
});
