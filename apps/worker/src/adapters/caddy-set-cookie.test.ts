import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CADDY_ADMIN_URL } from '../testing/network-fixtures.js';
import { createCaddyAdmin } from './caddy-admin.js';
import { createCaddyRoutes, routeId } from './caddy-routes.js';

// Issue 27, class 6, against the dev stack's Caddy: a tenant's app answered
// `Set-Cookie: session=…; Domain=<apps domain>; Path=/api` and the browser sent that cookie to
// every host of the site, the dashboard's included. Through a route the adapter installs, every
// Set-Cookie of the app loses its Domain attribute: the browser keeps it for the app's host only.
const instance = `test-cookies-${randomUUID().slice(0, 8)}`;
const caddy = createCaddyRoutes({ adminUrl: CADDY_ADMIN_URL, serverName: 'hostctl', instance });
const serviceId = randomUUID();
const host = `cookies-${serviceId.slice(0, 8)}.apps.localhost`;
const PLANTING = [
  'session=attackers-sealed-session; Domain=apps.localhost; Path=/api; HttpOnly',
  '__Host-session=x; Path=/; Secure; domain=.apps.localhost',
  'theme=dark; Path=/; SameSite=Lax',
  'pref=1;Domain=APPS.LOCALHOST;Max-Age=60',
];
let server: http.Server;

beforeAll(async () => {
  server = http.createServer((_request, response) => {
    response.setHeader('set-cookie', PLANTING);
    response.end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  await caddy.apply({
    serviceId,
    hosts: [host],
    upstreams: [`127.0.0.1:${(server.address() as AddressInfo).port}`],
  });
});

afterAll(async () => {
  await caddy.remove(serviceId);
  server.close();
});

function cookiesViaCaddy(): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const request = http.get(
      { host: '127.0.0.1', port: 80, path: '/', headers: { host }, timeout: 3000, agent: false },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.headers['set-cookie'] ?? []));
      },
    );
    request.on('timeout', () => request.destroy(new Error('timeout')));
    request.on('error', reject);
  });
}

describe("a tenant app's Set-Cookie through the proxy", () => {
  it('keeps every cookie but drops each Domain attribute, whatever its case or spacing', async () => {
    expect((await cookiesViaCaddy()).sort()).toEqual(
      [
        'session=attackers-sealed-session; Path=/api; HttpOnly',
        '__Host-session=x; Path=/; Secure',
        'theme=dark; Path=/; SameSite=Lax',
        'pref=1;Max-Age=60',
      ].sort(),
    );
  });

  it('a route an older version installed is listed as outdated until applied again', async () => {
    // What a route from before this rule looks like: the proxy without its header operations.
    await createCaddyAdmin(CADDY_ADMIN_URL).must('DELETE', `/id/${routeId(serviceId)}/handle/1/headers`);
    expect(await cookiesViaCaddy()).toContain(PLANTING[0]);
    const [old] = (await caddy.list()).filter((route) => route.serviceId === serviceId);
    expect(old?.outdated).toBe(true);

    await caddy.apply({ serviceId, hosts: [host], upstreams: old!.upstreams });
    const [current] = (await caddy.list()).filter((route) => route.serviceId === serviceId);
    expect(current?.outdated).toBeUndefined();
    expect((await cookiesViaCaddy()).some((line) => /domain=/i.test(line))).toBe(false);
  });
});
