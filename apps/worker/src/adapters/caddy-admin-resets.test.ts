import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createCaddyRoutes, routeId } from './caddy-routes.js';

// Caddy 2.6 resets the connections it holds while it applies a config, its admin API's included,
// and another writer's change can land between any two calls (CI lost a route listing to one
// `read ECONNRESET`). Reproducing that timing against the real Caddy is luck, so these tests put a
// stand-in for the admin API in front that cuts chosen requests off (caddy-admin.ts's rule); the adapter
// against the real Caddy is caddy-routes.test.ts.
interface AdminRequest {
  method: string;
  path: string;
}

const instance = `test-resets-${randomUUID().slice(0, 8)}`;
const serviceId = randomUUID();
const id = routeId(serviceId);
const routesPath = '/config/apps/http/servers/hostctl/routes';
let server: http.Server | undefined;

afterEach(() => server?.close());

/**
 * An admin API holding `routes`, answering like Caddy for the calls the adapter makes. `cut`
 * decides, per request (numbered from 1), whether to reset the connection instead of answering,
 * after or before applying the change.
 */
async function adminStandIn(cut: (request: AdminRequest, index: number) => 'before' | 'after' | undefined) {
  const routes: { '@id': string }[] = [];
  const seen: AdminRequest[] = [];
  server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      const call = { method: request.method ?? '', path: request.url ?? '' };
      seen.push(call);
      const when = cut(call, seen.length);
      if (when === 'before') return request.socket.destroy();
      const answer = apply(call, body);
      if (when === 'after') return request.socket.destroy();
      response.statusCode = answer.status;
      response.end(answer.text);
    });
  });
  const apply = (call: AdminRequest, body: string): { status: number; text: string } => {
    const byId = routes.findIndex((route) => call.path === `/id/${route['@id']}`);
    if (call.method === 'GET' && call.path === routesPath)
      return { status: 200, text: JSON.stringify(routes) };
    if (call.method === 'GET') return byId < 0 ? { status: 404, text: '{}' } : { status: 200, text: '{}' };
    if (call.method === 'PUT' && call.path === `${routesPath}/0`) routes.unshift(JSON.parse(body));
    else if (call.method === 'PATCH' && byId >= 0) routes[byId] = JSON.parse(body);
    else if (call.method === 'DELETE' && byId >= 0) routes.splice(byId, 1);
    else return { status: 404, text: '{}' };
    return { status: 200, text: '' };
  };
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const adminUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { caddy: createCaddyRoutes({ adminUrl, serverName: 'hostctl', instance }), routes, seen };
}

const route = { serviceId, hosts: ['resets.apps.localhost'], upstreams: ['127.0.0.1:9'] };

describe('the Caddy adapter when Caddy resets its admin connections', () => {
  it('a listing cut off once is read again', async () => {
    const { caddy } = await adminStandIn((_call, index) => (index === 2 ? 'before' : undefined));
    await caddy.apply(route);
    expect((await caddy.list()).map((listed) => listed.serviceId)).toEqual([serviceId]);
  });

  it('an insert cut off after Caddy applied it is read back, not inserted twice', async () => {
    const { caddy, routes, seen } = await adminStandIn((call) =>
      call.method === 'PUT' ? 'after' : undefined,
    );
    await caddy.apply(route);
    expect(routes.map((installed) => installed['@id'])).toEqual([id]);
    expect(seen.map((call) => call.method)).toEqual(['GET', 'PUT', 'GET', 'PATCH']);
  });

  it('an insert cut off before Caddy applied it is made again', async () => {
    let puts = 0;
    const { caddy, routes } = await adminStandIn((call) =>
      call.method === 'PUT' && ++puts === 1 ? 'before' : undefined,
    );
    await caddy.apply(route);
    expect(routes.map((installed) => installed['@id'])).toEqual([id]);
  });

  it('a removal survives a reset and still removes every copy', async () => {
    const { caddy, routes } = await adminStandIn((call, index) =>
      call.method === 'DELETE' && index % 2 === 0 ? 'before' : undefined,
    );
    routes.push({ '@id': id }, { '@id': id });
    await caddy.remove(serviceId);
    expect(routes).toEqual([]);
  });

  it('an admin API that keeps resetting is reported as unreachable, with the cause', async () => {
    const { caddy, seen } = await adminStandIn(() => 'before');
    await expect(caddy.list()).rejects.toThrow(/Caddy admin API unreachable: .*(ECONNRESET|socket hang up)/);
    expect(seen.length).toBe(4);
  });
});
