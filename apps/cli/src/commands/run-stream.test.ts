import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import { runCli } from '../cli.js';
import { fakeApi, TOKEN } from '../test-support/fake-api.js';
import { jobRunBody } from '../test-support/job-runs.js';

/**
 * `hostctl run` printing the output as it arrives: a local server plays the API's stream of
 * `GET /api/runs/:id/output?follow=true` over a real WebSocket (what it sends, and when, is up to
 * each test), and the fake answers the HTTP requests.
 */
const S = '3f1c2a4e-1111-4222-8333-444455556666';
const R = '5d1c2a4e-1111-4222-8333-444455556666';
let server: Server;
let sockets: WebSocketServer;
let baseUrl: string;
let behaviour: (socket: WebSocket) => void = () => undefined;
const handshakes: IncomingMessage[] = [];

beforeAll(async () => {
  server = createServer((_request, response) => response.writeHead(404).end());
  sockets = new WebSocketServer({ noServer: true });
  server.on('upgrade', (request: IncomingMessage, socket, head) => {
    handshakes.push(request);
    if (request.headers.authorization !== `Bearer ${TOKEN}`) {
      socket.end('HTTP/1.1 401 Unauthorized\r\n\r\n');
      return;
    }
    if (!request.url?.startsWith(`/api/runs/${R}/output?follow=true`)) {
      socket.end('HTTP/1.1 404 Not Found\r\n\r\n');
      return;
    }
    sockets.handleUpgrade(request, socket, head, (ws) => behaviour(ws));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  sockets.close();
  await new Promise((resolve) => server.close(resolve));
});

const jobRun = (extra: object = {}) => jobRunBody({ id: R, serviceId: S }, ['sh', '-c', 'x'], extra);
const entry = (message: string, stream = 'stdout') =>
  JSON.stringify({ timestamp: '2026-01-01T00:00:00.000Z', stream, message });
const final = { status: 'failed', exit_code: 3, output: 'first\nsecond\n', duration_ms: 2040 };

function api(runAnswer = jobRun(final)) {
  return fakeApi({
    [`GET /api/services/${S}`]: [200, { id: S, name: 'shop' }],
    [`POST /api/services/${S}/runs`]: [202, jobRun()],
    [`GET /api/runs/${R}`]: [200, runAnswer],
  });
}

/** Runs the CLI, noting for each stdout line whether the stream had ended when it was printed. */
async function runLive(fetchImpl: typeof fetch, state: { isEnded: boolean }) {
  const out: { line: string; isEnded: boolean }[] = [];
  const err: string[] = [];
  const code = await runCli(['run', S, '--', 'sh', '-c', 'x'], {
    env: { HOSTCTL_URL: baseUrl, HOSTCTL_TOKEN: TOKEN },
    fetchImpl,
    out: (line) => out.push({ line, isEnded: state.isEnded }),
    err: (line) => err.push(line),
    readStdin: async () => '',
  });
  return { code, out, err };
}

describe('run prints the output as it arrives', () => {
  it('prints each line before the run ends and exits with the command’s code', async () => {
    const state = { isEnded: false };
    behaviour = (socket) => {
      socket.send(entry('first\n'));
      // The second line arrives 300 ms later, in two chunks; then the end and the close.
      setTimeout(() => {
        socket.send(entry('sec'));
        socket.send(entry('ond\n'));
        state.isEnded = true;
        socket.send(JSON.stringify({ type: 'end', status: 'failed', exit_code: 3 }));
        socket.close(1000, 'end');
      }, 300);
    };
    const fake = api();
    const result = await runLive(fake.fetchImpl, state);
    expect(result.code).toBe(3);
    // Printed once, live: the first line before the end, and not again from the stored output.
    expect(result.out).toEqual([
      { line: 'first', isEnded: false },
      { line: 'second', isEnded: true },
    ]);
    expect(result.err.at(-1)).toMatch(/run .* failed \(exit code 3\)/);
    expect(new URL(handshakes.at(-1)?.url ?? '', baseUrl).pathname).toBe(`/api/runs/${R}/output`);
    expect(handshakes.at(-1)?.headers.authorization).toBe(`Bearer ${TOKEN}`);
  });

  it("prints the command's stderr on stderr and its stdout on stdout, each line whole", async () => {
    behaviour = (socket) => {
      socket.send(entry('rows: 4'));
      socket.send(entry('warning: slow\n', 'stderr'));
      socket.send(entry('2\nCOPY done\n'));
      socket.send(entry('last warning', 'stderr'));
      socket.send(JSON.stringify({ type: 'end' }));
      socket.close(1000);
    };
    const result = await runLive(api(jobRun({ ...final, status: 'succeeded', exit_code: 0 })).fetchImpl, {
      isEnded: false,
    });
    expect(result.code).toBe(0);
    // What a `> dump.sql` would hold: stdout only, its line not cut by the stderr chunk between.
    expect(result.out.map((item) => item.line)).toEqual(['rows: 42', 'COPY done']);
    expect(result.err).toEqual(expect.arrayContaining(['warning: slow', 'last warning']));
    expect(result.err.indexOf('warning: slow')).toBeLessThan(result.err.indexOf('last warning'));
  });

  it('prints a last line without its newline', async () => {
    behaviour = (socket) => {
      socket.send(entry('no newline'));
      socket.send(JSON.stringify({ type: 'end' }));
      socket.close(1000);
    };
    const result = await runLive(api(jobRun({ ...final, status: 'succeeded', exit_code: 0 })).fetchImpl, {
      isEnded: false,
    });
    expect(result).toMatchObject({ code: 0, out: [{ line: 'no newline' }] });
  });

  it('falls back to printing the stored output at the end when the API has no stream', async () => {
    const fake = fakeApi({
      [`GET /api/services/${S}`]: [200, { id: S, name: 'shop' }],
      [`POST /api/services/${S}/runs`]: [202, jobRun({ id: 'aaaaaaaa-1111-4222-8333-444455556666' })],
      [`GET /api/runs/aaaaaaaa-1111-4222-8333-444455556666`]: [200, jobRun(final)],
    });
    const result = await runLive(fake.fetchImpl, { isEnded: true });
    expect(result.code).toBe(3);
    expect(result.out.map((item) => item.line)).toEqual(['first\nsecond']);
  });

  it('exits 5 when the API refuses the stream’s credential', async () => {
    behaviour = (socket) => socket.close(4403, 'forbidden');
    const result = await runLive(api().fetchImpl, { isEnded: false });
    expect(result.code).toBe(5);
  });
});
