import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postNotification } from './notification-sender.js';

// The HTTP side of one attempt against a loopback server: address pinning, the deadline, redirects
// and how much of the answer is kept (docs/notifications.md#target-urls).
let server: Server;
let port = 0;
const seen: { url: string; headers: IncomingHttpHeaders }[] = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    seen.push({ url: request.url ?? '', headers: request.headers });
    request.resume();
    request.on('end', () => {
      if (request.url === '/hang') return;
      if (request.url === '/redirect') return void response.writeHead(307, { location: '/ok' }).end();
      if (request.url === '/big')
        return void response.writeHead(200).end(`big\r\n\u202e${'y'.repeat(100_000)}`);
      response.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const post = (path: string, overrides: Partial<Parameters<typeof postNotification>[0]> = {}) =>
  postNotification({
    url: `http://127.0.0.1:${port}${path}`,
    headers: {},
    body: '{}',
    timeoutMs: 2000,
    ...overrides,
  });

describe('postNotification', () => {
  it('connects to the pinned address, never resolving the name again', async () => {
    // `.invalid` never resolves (RFC 2606): only the pinned address can have been used.
    const outcome = await post('/ok', { url: `http://hooks.invalid:${port}/ok`, pinnedAddress: '127.0.0.1' });
    expect(outcome).toEqual({ ok: true, statusCode: 200, error: null, response: 'ok' });
    expect(seen.at(-1)?.headers.host).toBe(`hooks.invalid:${port}`);
  });

  it('fails an unresolvable name without a pinned address', async () => {
    const outcome = await post('/ok', { url: `http://hooks.invalid:${port}/ok` });
    expect(outcome.ok).toBe(false);
    expect(outcome.error).toMatch(/ENOTFOUND|EAI_AGAIN/);
  });

  it('gives up at the deadline when the receiver does not answer', async () => {
    const outcome = await post('/hang', { timeoutMs: 300 });
    expect(outcome).toMatchObject({ ok: false, statusCode: null, error: 'no answer within 300 ms' });
  });

  it('does not follow a redirect', async () => {
    const before = seen.length;
    const outcome = await post('/redirect');
    expect(outcome).toMatchObject({ ok: false, statusCode: 307 });
    expect(outcome.error).toMatch(/redirects are not followed/);
    expect(seen.length).toBe(before + 1);
  });

  it('keeps the first KiB of the answer as printable text', async () => {
    const outcome = await post('/big');
    expect(outcome.ok).toBe(true);
    expect(outcome.response).toMatch(/^big {3}y+$/);
    expect(outcome.response!.length).toBeLessThanOrEqual(1024);
  });
});
