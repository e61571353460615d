import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CADDY_ADMIN_URL, viaCaddy } from '../testing/network-fixtures.js';
import { createCaddyRoutes } from './caddy-routes.js';

// The drain's evidence against the dev stack's Caddy: after the switch to a new upstream, a
// request still running on the previous one is counted until it ends, and no new request reaches
// the previous one (release/release-engine.ts retires it only once the count is 0).
const instance = `test-drain-${randomUUID().slice(0, 8)}`;
const caddy = createCaddyRoutes({ adminUrl: CADDY_ADMIN_URL, serverName: 'hostctl', instance });
const serviceId = randomUUID();
const host = `drain-${serviceId.slice(0, 8)}.apps.localhost`;
const servers: http.Server[] = [];
/** Requests to the previous upstream wait until the test lets them finish. */
let finishSlow: () => void = () => undefined;
let slowStarted: Promise<void>;

async function upstream(name: string, slow: boolean): Promise<string> {
  let started: () => void = () => undefined;
  if (slow) slowStarted = new Promise((resolve) => (started = resolve));
  const server = http.createServer((_request, response) => {
    if (!slow) return response.end(name);
    started();
    finishSlow = () => response.end(name);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return `127.0.0.1:${(server.address() as AddressInfo).port}`;
}

let previous: string;
let next: string;

beforeAll(async () => {
  previous = await upstream('previous', true);
  next = await upstream('next', false);
});

afterAll(async () => {
  await caddy.remove(serviceId);
  finishSlow();
  for (const server of servers) server.close();
});

describe('Caddy counts a draining upstream’s requests in flight', () => {
  it('counts a request that started before the switch until it ends, and sends new requests to the new upstream only', async () => {
    await caddy.apply({ serviceId, hosts: [host], upstreams: [previous] });
    expect(await caddy.inFlight([previous])).toBe(0);
    const running = viaSlowRequest(host);
    await slowStarted;
    expect(await caddy.inFlight([previous])).toBe(1);

    await caddy.apply({ serviceId, hosts: [host], upstreams: [next], draining: [previous] });
    expect(await caddy.inFlight([previous])).toBe(1);
    for (let i = 0; i < 10; i += 1) expect(await viaCaddy(host)).toEqual({ status: 200, body: 'next' });
    expect(await caddy.inFlight([previous])).toBe(1);

    finishSlow();
    expect(await running).toEqual({ status: 200, body: 'previous' });
    expect(await caddy.inFlight([previous])).toBe(0);
  });

  it('lists the route by its serving upstream, the drain’s entry left as it is (not worth a reload)', async () => {
    const [listed] = (await caddy.list()).filter((route) => route.serviceId === serviceId);
    expect(listed).toEqual({ serviceId, hosts: [host], upstreams: [next] });
    expect(await viaCaddy(host)).toEqual({ status: 200, body: 'next' });
  });
});

/** A request through Caddy with no client timeout: it lasts as long as the upstream holds it. */
function viaSlowRequest(hostName: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.get(
      { host: '127.0.0.1', port: 80, path: '/', headers: { host: hostName }, agent: false },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      },
    );
    request.on('error', reject);
  });
}
