import { createServer } from 'node:net';

/** A loopback port nothing listens on right now (it may be taken again later: good enough for tests). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('the test server has no TCP port');
  return address.port;
}
