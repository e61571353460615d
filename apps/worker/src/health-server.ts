import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * /livez: the process can do its work (its queue consumers run and take jobs; a replica that
 * stopped consuming answers 503 so its supervisor restarts it). /readyz: every dependency answered
 * within a bound. /metrics: Prometheus text. Plain node:http: the worker has no other HTTP
 * surface and needs no framework.
 */
export type ReadinessCheck = () => Promise<void>;

const CHECK_TIMEOUT_MS = 2000;

export interface HealthServerOptions {
  host: string;
  port: number;
  checks: Record<string, ReadinessCheck>;
  liveness?: () => { isLive: boolean; problems: string[] };
  metrics?: () => Promise<{ contentType: string; body: string }>;
}

export async function startHealthServer(
  options: HealthServerOptions,
): Promise<{ port: number; close(): Promise<void> }> {
  const server = http.createServer((request, response) => {
    const reply = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      response.end(JSON.stringify(body));
    };
    if (request.method !== 'GET') return reply(405, { status: 'method not allowed' });
    if (request.url === '/livez') {
      const liveness = options.liveness?.() ?? { isLive: true, problems: [] };
      return liveness.isLive
        ? reply(200, { status: 'ok' })
        : reply(503, { status: 'not consuming', problems: liveness.problems });
    }
    if (request.url === '/metrics' && options.metrics) {
      void options.metrics().then(
        ({ contentType, body }) => {
          response.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' });
          response.end(body);
        },
        () => reply(500, { status: 'metrics unavailable' }),
      );
      return;
    }
    if (request.url !== '/readyz') return reply(404, { status: 'not found' });
    void runChecks(options.checks).then((results) => {
      const isReady = Object.values(results).every((result) => result === 'ok');
      reply(isReady ? 200 : 503, { status: isReady ? 'ok' : 'unavailable', checks: results });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function runChecks(checks: Record<string, ReadinessCheck>): Promise<Record<string, string>> {
  const entries = await Promise.all(
    Object.entries(checks).map(async ([name, check]) => {
      try {
        await Promise.race([
          check(),
          new Promise((_, reject) =>
            setTimeout(() => reject(new Error('timeout')), CHECK_TIMEOUT_MS).unref(),
          ),
        ]);
        return [name, 'ok'] as const;
      } catch {
        // The reason stays in the worker's logs; probes only need to know it failed.
        return [name, 'failing'] as const;
      }
    }),
  );
  return Object.fromEntries(entries);
}
