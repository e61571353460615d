import { readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createCaddyTls } from './caddy-tls.js';

// Caddy serves TLS on every listener of a server with TLS connection policies except the one on
// its http_port (default 80): a Caddy taking plain HTTP on 8080 answered "400 Client sent an HTTP
// request to an HTTPS server" to every route once the worker turned HTTPS on (found by the tls
// benchmark's first run). The worker refuses instead, before it changes anything. Caddy's own
// behaviour was seen with the real Caddy (docs/tls.md); what the worker decides from a server's
// config is tested here against a stand-in admin API holding that config.
let server: http.Server | undefined;
afterEach(() => server?.close());

async function caddyWith(
  config: { listen: string[]; httpPort?: number; httpsPort?: number; policies?: unknown[] },
  httpsListen = '127.0.0.1:443',
) {
  const changes: string[] = [];
  const answers: Record<string, unknown> = {
    '/config/apps/http/servers/hostctl/listen': config.listen,
    '/config/apps/http/servers/hostctl/tls_connection_policies': config.policies ?? null,
    '/config/apps/http/http_port': config.httpPort ?? null,
    '/config/apps/http/https_port': config.httpsPort ?? null,
  };
  server = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      const path = request.url ?? '';
      if (request.method !== 'GET') changes.push(`${request.method} ${path}`);
      else if (!(path in answers)) response.statusCode = 404;
      response.end(request.method === 'GET' ? JSON.stringify(answers[path] ?? null) : '');
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const tls = createCaddyTls({
    adminUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    serverName: 'hostctl',
    instance: 'test-listeners',
    httpsListen,
  });
  return { tls, changes };
}

describe('turning HTTPS on in Caddy', () => {
  it('refuses, changing nothing, when plain HTTP is served on a port other than http_port', async () => {
    const { tls, changes } = await caddyWith({ listen: ['127.0.0.1:8080'] });
    await expect(tls.ensureHttps()).rejects.toThrow(
      /listens on 127\.0\.0\.1:8080, not on its http_port 80.*Set apps\.http\.http_port/,
    );
    expect(changes).toEqual([]);
  });

  it('goes ahead when http_port names that port', async () => {
    const { tls, changes } = await caddyWith({ listen: ['127.0.0.1:8080'], httpPort: 8080 });
    await tls.ensureHttps();
    expect(changes).toEqual([
      'PUT /config/apps/http/servers/hostctl/tls_connection_policies',
      'PATCH /config/apps/http/servers/hostctl/listen',
    ]);
  });

  it("goes ahead with the dev stack's listener (port 80) and the production one (443 only)", async () => {
    for (const listen of [['127.0.0.1:80'], [':443'], ['127.0.0.1:80', '127.0.0.1:443']]) {
      const { tls, changes } = await caddyWith({ listen });
      await tls.ensureHttps();
      expect(changes[0]).toBe('PUT /config/apps/http/servers/hostctl/tls_connection_policies');
      server?.close();
    }
  });

  it("changes nothing in the production compose's Caddy, which has both listeners already", async () => {
    // docker/caddy.json.template, with docker/compose.yml's CADDY_HTTPS_LISTEN=:443.
    const template = JSON.parse(
      readFileSync(path.resolve(import.meta.dirname, '../../../../docker/caddy.json.template'), 'utf8'),
    ) as {
      apps: {
        http: {
          http_port: number;
          https_port: number;
          servers: { hostctl: { listen: string[]; tls_connection_policies: unknown[] } };
        };
      };
    };
    const { http: app } = template.apps;
    const { tls, changes } = await caddyWith(
      {
        listen: app.servers.hostctl.listen,
        httpPort: app.http_port,
        httpsPort: app.https_port,
        policies: app.servers.hostctl.tls_connection_policies,
      },
      ':443',
    );
    await tls.ensureHttps();
    expect(changes).toEqual([]);
  });
});
