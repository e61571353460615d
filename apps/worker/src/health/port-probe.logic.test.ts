import net from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { probePort, probePublishedPort } from './port-probe.js';

// Real sockets on loopback: a server that answers nothing (an HTTP server waiting for its
// request), one that accepts and closes at once (Docker's userland proxy in front of a container
// that does not listen), one that greets (SMTP-like), and a closed port.
const servers: net.Server[] = [];
async function serve(onConnection: (socket: net.Socket) => void): Promise<number> {
  const server = net.createServer(onConnection);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as net.AddressInfo).port;
}
afterAll(async () => {
  for (const server of servers) await new Promise((resolve) => server.close(resolve));
});

describe('probing a port published through a proxy', () => {
  it('counts a connection the proxy closes at once as not listening, though it connected', async () => {
    const port = await serve((socket) => socket.destroy());
    expect(await probePort('127.0.0.1', port)).toBe(true);
    expect(await probePublishedPort('127.0.0.1', port)).toBe(false);
  });

  it('counts a connection held open, or a greeting, as listening', async () => {
    const silent = await serve(() => undefined);
    const greeting = await serve((socket) => socket.end('220 ready\r\n'));
    expect(await probePublishedPort('127.0.0.1', silent)).toBe(true);
    expect(await probePublishedPort('127.0.0.1', greeting)).toBe(true);
  });

  it('counts a refused connection as not listening', async () => {
    const port = await serve(() => undefined);
    await new Promise((resolve) => servers.pop()!.close(resolve));
    expect(await probePublishedPort('127.0.0.1', port)).toBe(false);
  });
});
