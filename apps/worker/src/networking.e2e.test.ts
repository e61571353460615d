import { randomUUID } from 'node:crypto';
import { Resolver } from 'node:dns/promises';
import { describe, expect, it } from 'vitest';
import { routeId } from './adapters/caddy-routes.js';
import { createComposeService, waitFor, waitForDeployment, type CreatedService } from './testing/fixtures.js';
import { deploymentLog } from './testing/repository-fixtures.js';
import {
  CADDY_ADMIN_URL,
  caddyAdmin,
  PDNS_API_URL,
  pdns,
  pdnsApiKey,
  viaCaddy,
} from './testing/network-fixtures.js';
import { TEST_IMAGE } from './testing/test-env.js';
import { useWorkerApp } from './testing/worker-fixture.js';

// Public URLs through the real Caddy (127.0.0.1:80) and records in the real PowerDNS (:5300):
// routes and owned records appear on deploy, come back after Caddy forgets them, and disappear on
// delete, while a record and a route the platform did not make are left alone.
const suffix = randomUUID().slice(0, 8);
const zone = `hostctl-test-${suffix}.test`;
const foreignRouteId = `hostctl-test-foreign-${suffix}`;
const { prefix, db, app, created } = useWorkerApp('net', {
  env: {
    CADDY_ADMIN_URL,
    DNS_PROVIDER: 'powerdns',
    PDNS_API_URL,
    PDNS_API_KEY: pdnsApiKey(),
    PUBLIC_IP: '127.0.0.1',
    APPS_DOMAIN: 'apps.localhost',
  },
  app: { observe: false, readiness: { timeoutMs: 20_000, stableMs: 300 } },
  beforeStart: async () => {
    expect(await pdns('POST', '/zones', { name: `${zone}.`, kind: 'Native', nameservers: [] })).toBe(201);
    // Someone else's record inside a zone the platform may write to.
    expect(
      await pdns('PATCH', `/zones/${zone}.`, {
        rrsets: [
          {
            name: `foreign.${zone}.`,
            type: 'A',
            ttl: 60,
            changetype: 'REPLACE',
            records: [{ content: '192.0.2.10', disabled: false }],
          },
        ],
      }),
    ).toBe(204);
  },
  cleanup: async () => {
    await caddyAdmin.removeId(foreignRouteId).catch(() => undefined);
    await pdns('DELETE', `/zones/${zone}.`);
  },
});
const resolver = new Resolver();
resolver.setServers(['127.0.0.1:5300']);

/** What the API's ownership check records once it sees the owner's proof. */
const markVerified = (serviceId: string, names: string[]) =>
  db.customDomainVerification.updateMany({
    where: { serviceId, name: { in: names } },
    data: { status: 'verified', verifiedAt: new Date() },
  });
const caddyRoute = async (serviceId: string): Promise<unknown> =>
  caddyAdmin.json(`/id/${routeId(serviceId)}`);

const lookup = (name: string) =>
  resolver.resolve4(name).catch((error: { code?: string }) => error.code ?? 'error');

describe('routes and DNS records of a service', () => {
  let service: CreatedService;
  let name: string;

  it('publishes <name>.apps.localhost and custom domains on deploy', async () => {
    service = await createComposeService(db, {
      compose: `services:\n  web:\n    image: ${TEST_IMAGE}\n    ports: ["8080"]\n`,
    });
    created.push(service);
    const row = await db.service.update({
      where: { id: service.serviceId },
      data: {
        customDomains: [`www.${zone}`, `foreign.${zone}`, `shop.nowhere-${suffix}.test`, `pending.${zone}`],
      },
    });
    name = row.name;
    // The owners proved all but one (the API's check: custom-domains.test.ts); that one stays pending.
    await markVerified(service.serviceId, [`www.${zone}`, `foreign.${zone}`, `shop.nowhere-${suffix}.test`]);
    await app.producer.enqueue('deploy', { deploymentId: service.deploymentId });
    expect((await waitForDeployment(db, service.deploymentId)).status).toBe('succeeded');

    expect(await viaCaddy(`${name}.apps.localhost`)).toEqual({ status: 200, body: 'hello from busybox\n' });
    expect(await viaCaddy(`www.${zone}`)).toMatchObject({ status: 200, body: 'hello from busybox\n' });
    expect(await viaCaddy(`nope-${suffix}.apps.localhost`)).toEqual({ status: 404, body: 'no such service' });
    // Claimed but not proven: no route and no record.
    expect(await viaCaddy(`pending.${zone}`)).toEqual({ status: 404, body: 'no such service' });
    expect(JSON.stringify(await caddyRoute(service.serviceId))).not.toContain(`pending.${zone}`);
    expect(await lookup(`pending.${zone}`)).toBe('ENOTFOUND');

    expect(await lookup(`${name}.apps.localhost`)).toEqual(['127.0.0.1']);
    expect(await lookup(`www.${zone}`)).toEqual(['127.0.0.1']);
    expect(await lookup(`foreign.${zone}`)).toEqual(['192.0.2.10']);
    const log = await deploymentLog(db, service.deploymentId);
    expect(log).toContain(
      `DNS: foreign.${zone}. not published: it already has a A record the platform does not own`,
    );
    expect(log).toContain(
      `DNS: shop.nowhere-${suffix}.test. not published: no zone on the DNS server contains it`,
    );
  });

  it('the reconciler restores a route Caddy lost and removes routes of gone services', async () => {
    expect((await caddyAdmin.call('DELETE', `/id/${routeId(service.serviceId)}`)).status).toBe(200);
    expect((await viaCaddy(`${name}.apps.localhost`)).status).toBe(404);
    const ghost = randomUUID();
    const route = (id: string, instance: string, host: string) => ({
      '@id': id,
      match: [{ host: [host] }],
      handle: [
        { handler: 'vars', hostctl_instance: instance, hostctl_service: id.replace('hostctl-svc-', '') },
        { handler: 'static_response', body: 'stale' },
      ],
      terminal: true,
    });
    const put = (body: unknown) => caddyAdmin.call('PUT', '/config/apps/http/servers/hostctl/routes/0', body);
    expect((await put(route(routeId(ghost), prefix, `ghost-${suffix}.apps.localhost`))).status).toBe(200);
    // Another installation's route (its own instance marker) is none of this reconciler's business.
    expect(
      (await put(route(foreignRouteId, `${prefix}-other`, `other-${suffix}.apps.localhost`))).status,
    ).toBe(200);

    const repairs = await app.reconciler.runOnce();
    expect(repairs?.routesRepaired).toBe(2);
    expect(await viaCaddy(`${name}.apps.localhost`)).toEqual({ status: 200, body: 'hello from busybox\n' });
    expect((await viaCaddy(`ghost-${suffix}.apps.localhost`)).status).toBe(404);
    expect(await viaCaddy(`other-${suffix}.apps.localhost`)).toEqual({ status: 200, body: 'stale' });
    // A second sweep finds nothing to do.
    expect((await app.reconciler.runOnce())?.routesRepaired).toBe(0);
  });

  it('the reconciler publishes again a DNS record the DNS server lost, and only once', async () => {
    expect(
      await pdns('PATCH', '/zones/apps.localhost.', {
        rrsets: [{ name: `${name}.apps.localhost.`, type: 'A', changetype: 'DELETE' }],
      }),
    ).toBe(204);
    expect(await lookup(`${name}.apps.localhost`)).toBe('ENOTFOUND');

    expect((await app.reconciler.runOnce())?.routesRepaired).toBe(1);
    expect(await lookup(`${name}.apps.localhost`)).toEqual(['127.0.0.1']);
    expect(await lookup(`www.${zone}`)).toEqual(['127.0.0.1']);
    // The foreign name and the one outside every zone stay as they are, so nothing is left to do.
    expect(await lookup(`foreign.${zone}`)).toEqual(['192.0.2.10']);
    expect((await app.reconciler.runOnce())?.routesRepaired).toBe(0);
  });

  it('a domain verified after the deploy is routed by the next sweep, without a redeploy', async () => {
    await markVerified(service.serviceId, [`pending.${zone}`]);
    expect((await app.reconciler.runOnce())?.routesRepaired).toBe(1);
    expect(await viaCaddy(`pending.${zone}`)).toEqual({ status: 200, body: 'hello from busybox\n' });
    expect(await lookup(`pending.${zone}`)).toEqual(['127.0.0.1']);
    expect((await app.reconciler.runOnce())?.routesRepaired).toBe(0);
  });

  it('delete removes the route and exactly the records the platform owns', async () => {
    await db.service.update({ where: { id: service.serviceId }, data: { deletedAt: new Date() } });
    await app.producer.enqueue('delete', { serviceId: service.serviceId });
    await waitFor(
      'purge',
      async () => (await db.service.findUnique({ where: { id: service.serviceId } }))?.purgedAt,
    );
    expect(await viaCaddy(`${name}.apps.localhost`)).toEqual({ status: 404, body: 'no such service' });
    expect((await viaCaddy(`www.${zone}`)).status).toBe(404);
    expect(await lookup(`${name}.apps.localhost`)).toBe('ENOTFOUND');
    expect(await lookup(`www.${zone}`)).toBe('ENOTFOUND');
    expect(await lookup(`foreign.${zone}`)).toEqual(['192.0.2.10']);
  });
});
