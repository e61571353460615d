import http from 'node:http';
import { describe, expect, it } from 'vitest';
import { createComposeService, waitForDeployment } from './testing/fixtures.js';
import { CADDY_ADMIN_URL } from './testing/network-fixtures.js';
import { TEST_IMAGE } from './testing/test-env.js';
import { useWorkerApp } from './testing/worker-fixture.js';

// Issue 27, class 6, end to end: a tenant's container answers with
// `Set-Cookie: session=…; Domain=apps.localhost; Path=/api`, the cookie that planted a login on
// the dashboard sharing the site. Deployed by the worker and reached through the real Caddy
// (127.0.0.1:80), the cookie arrives without its Domain: the browser keeps it for the app's host.
const { db, app, created } = useWorkerApp('cookies', {
  env: { CADDY_ADMIN_URL, DNS_PROVIDER: 'none', APPS_DOMAIN: 'apps.localhost' },
  app: { observe: false, readiness: { timeoutMs: 20_000, stableMs: 300 } },
});

const PLANTED = 'session=attackers-sealed-session; Domain=apps.localhost; Path=/api; HttpOnly';
// busybox httpd runs /www/cgi-bin/cookie: its header lines are the answer's headers.
const script = [
  'mkdir -p /www/cgi-bin',
  `printf '#!/bin/sh\\necho "Set-Cookie: ${PLANTED}"\\necho "Set-Cookie: theme=dark; Path=/"\\necho "Content-Type: text/plain"\\necho\\necho planted\\n' > /www/cgi-bin/cookie`,
  'chmod +x /www/cgi-bin/cookie',
  'exec httpd -f -p 8080 -h /www',
].join(' && ');
// JSON is YAML: no quoting of the script to get wrong.
const compose = JSON.stringify({
  services: { web: { image: TEST_IMAGE, ports: ['8080'], command: ['sh', '-c', script] } },
});

function viaCaddy(host: string, path: string): Promise<{ status: number; cookies: string[] }> {
  return new Promise((resolve, reject) => {
    const request = http.get(
      { host: '127.0.0.1', port: 80, path, headers: { host }, timeout: 3000, agent: false },
      (response) => {
        response.resume();
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, cookies: response.headers['set-cookie'] ?? [] }),
        );
      },
    );
    request.on('timeout', () => request.destroy(new Error('timeout')));
    request.on('error', reject);
  });
}

describe("a tenant app's cookies through the proxy", () => {
  it('arrive host-only: the Domain attribute is gone, the rest is kept', async () => {
    const service = await createComposeService(db, { compose });
    created.push(service);
    await app.producer.enqueue('deploy', { deploymentId: service.deploymentId });
    expect((await waitForDeployment(db, service.deploymentId)).status).toBe('succeeded');
    const { name } = await db.service.findUniqueOrThrow({ where: { id: service.serviceId } });

    const answer = await viaCaddy(`${name}.apps.localhost`, '/cgi-bin/cookie');
    expect(answer.status).toBe(200);
    expect(answer.cookies.sort()).toEqual(
      ['session=attackers-sealed-session; Path=/api; HttpOnly', 'theme=dark; Path=/'].sort(),
    );
  });
});
