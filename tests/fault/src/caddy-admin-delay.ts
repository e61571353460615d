import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An HTTP proxy in front of Caddy's admin API that can hold every write (route changes) for a
 * while. The route switch of a cutover is a couple of milliseconds of Caddy calls: too short for a
 * SIGKILL aimed at it to land reliably. Held writes stretch that step so the kill lands inside it,
 * the way a slow proxy would; reads pass at once and nothing else changes.
 */
export interface CaddyAdminDelay {
  url: string;
  holdWrites(ms: number): void;
  close(): Promise<void>;
}

export async function startCaddyAdminDelay(target: string): Promise<CaddyAdminDelay> {
  const upstream = new URL(target);
  let holdMs = 0;
  const server = http.createServer((request, response) => {
    const forward = () => {
      const proxied = http.request(
        {
          host: upstream.hostname,
          port: Number(upstream.port || 80),
          method: request.method,
          path: request.url,
          headers: { ...request.headers, host: upstream.host },
        },
        (answer) => {
          response.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(response);
        },
      );
      proxied.on('error', () => response.destroy());
      request.pipe(proxied);
    };
    const isWrite = request.method !== 'GET' && request.method !== 'HEAD';
    if (isWrite && holdMs > 0) setTimeout(forward, holdMs);
    else forward();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    holdWrites(ms) {
      holdMs = ms;
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
