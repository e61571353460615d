import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CADDY_ADMIN_URL, viaCaddy } from '../testing/network-fixtures.js';
import { createCaddyRoutes } from './caddy-routes.js';

// The Caddy adapter against the dev stack's Caddy: a route with several upstreams (a Swarm
// service's tasks) spreads requests over them, and an upstream that refuses connections (a task
// stopped during an update, before the route follows) costs the visitor nothing.
const instance = `test-caddy-${randomUUID().slice(0, 8)}`;
const caddy = createCaddyRoutes({ adminUrl: CADDY_ADMIN_URL, serverName: 'hostctl', instance });
const serviceId = randomUUID();
const host = `caddy-${serviceId.slice(0, 8)}.apps.localhost`;
const servers: http.Server[] = [];

async function answering(name: string): Promise<string> {
  const server = http.createServer((_request, response) => response.end(name));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return `127.0.0.1:${(server.address() as AddressInfo).port}`;
}

let first: string;
let second: string;
let refusing: string;

beforeAll(async () => {
  first = await answering('one');
  second = await answering('two');
  // Port 9 (discard): nothing listens there. A free port picked now could be bound by another
  // test's listener before these requests, and a request sent to it is not retried (a 502).
  refusing = '127.0.0.1:9';
});

afterAll(async () => {
  await caddy.remove(serviceId);
  for (const server of servers) server.close();
});

describe('Caddy routes with several upstreams', () => {
  it('lists the route with every upstream it was given', async () => {
    await caddy.apply({ serviceId, hosts: [host], upstreams: [first, second] });
    const [route] = (await caddy.list()).filter((item) => item.serviceId === serviceId);
    expect(route).toEqual({ serviceId, hosts: [host], upstreams: [first, second] });
  });

  it('spreads requests over the upstreams', async () => {
    const bodies = new Set<string>();
    for (let i = 0; i < 40; i += 1) bodies.add((await viaCaddy(host)).body);
    expect([...bodies].sort()).toEqual(['one', 'two']);
  });

  it('retries a refused connection on another upstream: every request answers', async () => {
    await caddy.apply({ serviceId, hosts: [host], upstreams: [refusing, first] });
    const answers = [];
    for (let i = 0; i < 30; i += 1) answers.push(await viaCaddy(host));
    expect(answers.filter((answer) => answer.status !== 200 || answer.body !== 'one')).toEqual([]);
  });

  it('a single upstream that refuses is a 502, as before (no retry to wait out)', async () => {
    await caddy.apply({ serviceId, hosts: [host], upstreams: [refusing] });
    expect((await viaCaddy(host)).status).toBe(502);
  });
});
