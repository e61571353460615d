import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { routeId } from './adapters/caddy-routes.js';
import { createAdvisoryLocks } from '@hostctl/db';
import {
  createComposeService,
  silentLogger,
  testConfig,
  waitForDeployment,
  type CreatedService,
} from './testing/fixtures.js';
import { createCertificates } from './tls/tls-wiring.js';
import { CADDY_ADMIN_URL, caddyAdmin, PDNS_API_URL, pdns, pdnsApiKey } from './testing/network-fixtures.js';
import {
  PEBBLE_DIRECTORY_URL,
  pebbleListenerCertFile,
  pebbleRoot,
  plainHttp,
  viaCaddyTls,
} from './testing/tls-fixtures.js';
import { TEST_IMAGE } from './testing/test-env.js';
import { useWorkerApp } from './testing/worker-fixture.js';

// A certificate per verified custom domain through http-01 answered by the real Caddy, validated
// by the real pebble, which resolves the name at the real PowerDNS (the route step published its
// A record, 127.0.0.1); then the HTTPS behaviour of the routes: 308 to HTTPS except for the ACME
// path, the per-service opt-out, HSTS only when asked and only over HTTPS (docs/tls.md).
const suffix = randomUUID().slice(0, 8);
const zone = `hostctl-tls-${suffix}.test`;
const SHOP = `shop.${zone}`;
const PENDING = `pending.${zone}`;
const WILDCARD = '*.apps.localhost';
const opsCustomerId = randomUUID();
const env = {
  CADDY_ADMIN_URL,
  CADDY_HTTPS_LISTEN: '127.0.0.1:443',
  DNS_PROVIDER: 'powerdns',
  PDNS_API_URL,
  PDNS_API_KEY: pdnsApiKey(),
  PUBLIC_IP: '127.0.0.1',
  APPS_DOMAIN: 'apps.localhost',
  ACME_DIRECTORY_URL: PEBBLE_DIRECTORY_URL,
  ACME_CA_CERT_FILE: pebbleListenerCertFile(),
};
const worker = useWorkerApp('tlsdom', {
  env,
  app: { observe: false, readiness: { timeoutMs: 20_000, stableMs: 300 } },
  beforeStart: async (): Promise<void> => {
    expect(await pdns('POST', '/zones', { name: `${zone}.`, kind: 'Native', nameservers: [] })).toBe(201);
  },
  cleanup: async (): Promise<void> => {
    for (const id of [`hostctl-tls-${worker.prefix}`, `hostctl-tls-${worker.prefix}--${SHOP}`])
      await caddyAdmin.removeId(id).catch(() => undefined);
    await db.tlsCertificate.deleteMany({ where: { name: { in: [WILDCARD, SHOP, PENDING] } } });
    await pdns('DELETE', `/zones/${zone}.`);
    await db.customer.deleteMany({ where: { id: opsCustomerId } });
  },
});
const { db, app, created } = worker;

const caddyConfig = async (): Promise<string> => JSON.stringify(await caddyAdmin.json('/config/'));
const setHttps = (serviceId: string, data: { httpsRedirect?: boolean; hstsMaxAge?: number | null }) =>
  db.service.update({ where: { id: serviceId }, data });

describe('a certificate per verified custom domain', () => {
  let root: string;
  let service: CreatedService;
  let name: string;
  let firstSerial: string;

  beforeAll(async () => {
    root = await pebbleRoot();
    service = await createComposeService(db, {
      compose: `services:\n  web:\n    image: ${TEST_IMAGE}\n    ports: ["8080"]\n`,
    });
    created.push(service);
    name = (
      await db.service.update({ where: { id: service.serviceId }, data: { customDomains: [SHOP, PENDING] } })
    ).name;
    // The owner proved SHOP (the API's check: custom-domains.test.ts); PENDING stays unproven.
    await db.customDomainVerification.updateMany({
      where: { serviceId: service.serviceId, name: SHOP },
      data: { status: 'verified', verifiedAt: new Date() },
    });
    await app.producer.enqueue('deploy', { deploymentId: service.deploymentId });
    expect((await waitForDeployment(db, service.deploymentId)).status).toBe('succeeded');
    // The platform's ACME account lives with the wildcard, which every installation has first.
    await app.certificates.runOnce();
  });

  it('orders the verified domain through http-01 and Caddy serves it; the unverified one is never ordered', async () => {
    const round = await app.certificates.runDomainsOnce();
    const stored = await db.tlsCertificate.findUnique({ where: { name: SHOP } });
    // The CA's words on a failure are in last_error: shown when this fails.
    expect({ ...round, lastError: stored?.lastError }).toMatchObject({
      issued: [SHOP],
      loaded: [SHOP],
      lastError: null,
    });
    expect(stored?.issuer).toMatch(/Pebble/);
    // An order, even a failed one, leaves a row: none for the unproven name, and no route for it.
    expect(await db.tlsCertificate.findUnique({ where: { name: PENDING } })).toBeNull();
    expect(await caddyConfig()).not.toContain(PENDING);
    // The key is sealed like the wildcard's (docs/secrets.md).
    const [raw] = await db.$queryRaw<{ key: string }[]>`
      SELECT private_key_pem::text AS key FROM tls_certificates WHERE name = ${SHOP}`;
    expect(raw?.key).toContain('hostctl/aes-256-gcm/1');
    expect(raw?.key).not.toContain('PRIVATE KEY');
    // The challenge answer was withdrawn.
    expect(await caddyConfig()).not.toContain(`hostctl-acme-${worker.prefix}`);

    const answer = await viaCaddyTls(SHOP, root);
    expect(answer).toMatchObject({ status: 200, body: 'hello from busybox\n' });
    expect(answer.certificate.subjectaltname).toBe(`DNS:${SHOP}`);
    expect(answer.certificate.issuer.CN).toMatch(/Pebble/);
    firstSerial = answer.certificate.serialNumber;
    // The apps name keeps the wildcard on the same listener (SNI picks the certificate).
    expect((await viaCaddyTls(`${name}.apps.localhost`, root)).certificate.subjectaltname).toBe(
      `DNS:${WILDCARD}`,
    );
  });

  it('a second round orders nothing; at two thirds of its lifetime it is renewed and Caddy serves the new one', async () => {
    expect(await app.certificates.runDomainsOnce()).toEqual({ issued: [], loaded: [], removed: [] });
    await db.tlsCertificate.update({
      where: { name: SHOP },
      data: { renewAfter: new Date(Date.now() - 1000) },
    });
    const round = await app.certificates.runDomainsOnce();
    const stored = await db.tlsCertificate.findUniqueOrThrow({ where: { name: SHOP } });
    expect({ ...round, lastError: stored.lastError, issuedCount: stored.issuedCount }).toMatchObject({
      issued: [SHOP],
      loaded: [SHOP],
      lastError: null,
      issuedCount: 2,
    });
    expect((await viaCaddyTls(SHOP, root)).certificate.serialNumber).not.toBe(firstSerial);
  });

  it('the CA unreachable at renewal: the old certificate keeps serving, the error is recorded and announced once', async () => {
    await db.customer.create({ data: { id: opsCustomerId, name: `tls-domains-${suffix}` } });
    const subscription = await db.notificationSubscription.create({
      data: {
        customerId: opsCustomerId,
        url: `https://ops-${suffix}.invalid/hook`,
        events: ['certificate.renewal_failed'],
        secret: `whsec_${randomUUID()}`,
      },
    });
    const serving = (await viaCaddyTls(SHOP, root)).certificate.serialNumber;
    const before = await db.tlsCertificate.findUniqueOrThrow({ where: { name: SHOP } });
    await db.tlsCertificate.update({
      where: { name: SHOP },
      data: { renewAfter: new Date(Date.now() - 1000) },
    });
    const locks = createAdvisoryLocks({ url: testConfig(worker.prefix).DATABASE_URL, max: 2 });
    try {
      // Nothing listens on loopback port 9: the CA is down.
      const caDown = createCertificates(
        testConfig(worker.prefix, {
          ...env,
          ACME_DIRECTORY_URL: 'https://127.0.0.1:9/dir',
          PLATFORM_NOTIFICATIONS_CUSTOMER_ID: opsCustomerId,
        }),
        { db, locks, logger: silentLogger },
      );
      expect(await caDown.runDomainsOnce()).toEqual({ issued: [], loaded: [], removed: [] });
      const failed = await db.tlsCertificate.findUniqueOrThrow({ where: { name: SHOP } });
      expect(failed.lastError).toMatch(/ECONNREFUSED/);
      expect(failed.certificatePem).toBe(before.certificatePem);
      expect((await viaCaddyTls(SHOP, root)).certificate.serialNumber).toBe(serving);
      // The customer's DNS may be what fails: the next round waits (CA limits on failed validations).
      await caDown.runDomainsOnce();
      expect((await db.tlsCertificate.findUniqueOrThrow({ where: { name: SHOP } })).lastAttemptAt).toEqual(
        failed.lastAttemptAt,
      );
    } finally {
      await locks.close();
    }
    const alerts = await db.notificationDelivery.findMany({
      where: { subscriptionId: subscription.id, event: 'certificate.renewal_failed' },
    });
    expect(alerts).toHaveLength(1);
    expect(JSON.stringify(alerts[0])).toContain(SHOP);
    expect(await app.metrics.registry.metrics()).toContain(
      `hostctl_certificate_renewal_failing{name="${SHOP}"} 1`,
    );
  });

  it('plain HTTP answers 308 to HTTPS for the apps name and the certified domain, the ACME path excepted', async () => {
    // The route was applied before SHOP had a certificate: the sweep adds the redirect for it.
    await app.reconciler.runOnce();
    for (const host of [`${name}.apps.localhost`, SHOP]) {
      const answer = await plainHttp(host, '/some/page?q=1');
      expect({ status: answer.status, location: answer.headers.location }).toEqual({
        status: 308,
        location: `https://${host}/some/page?q=1`,
      });
      // http-01 must reach whoever answers it: proxied (busybox has no such file), not redirected.
      expect((await plainHttp(host, '/.well-known/acme-challenge/abc')).status).toBe(404);
      const secure = await viaCaddyTls(host, root);
      expect(secure.status).toBe(200);
      expect(secure.headers['strict-transport-security']).toBeUndefined();
    }
  });

  it('HSTS when the service opts in, over HTTPS only', async () => {
    await setHttps(service.serviceId, { hstsMaxAge: 600, httpsRedirect: false });
    await app.reconciler.runOnce();
    for (const host of [`${name}.apps.localhost`, SHOP]) {
      expect((await viaCaddyTls(host, root)).headers['strict-transport-security']).toBe('max-age=600');
      const plain = await plainHttp(host);
      expect(plain.status).toBe(200);
      expect(plain.headers['strict-transport-security']).toBeUndefined();
    }
  });

  it('the opt-out: plain HTTP is proxied as it comes', async () => {
    await setHttps(service.serviceId, { hstsMaxAge: null, httpsRedirect: false });
    await app.reconciler.runOnce();
    expect(JSON.stringify(await caddyAdmin.json(`/id/${routeId(service.serviceId)}`))).not.toContain(
      'subroute',
    );
    const plain = await plainHttp(`${name}.apps.localhost`);
    expect({ status: plain.status, location: plain.headers.location }).toEqual({
      status: 200,
      location: undefined,
    });
    expect((await viaCaddyTls(SHOP, root)).headers['strict-transport-security']).toBeUndefined();
  });

  it('refuses TLS below 1.2', async () => {
    // SECLEVEL=0 lets this client offer TLS 1.1 at all: the refusal must be Caddy's alert.
    const attempt = viaCaddyTls(SHOP, root, 443, { maxVersion: 'TLSv1.1' });
    await expect(attempt).rejects.toThrow(/alert protocol version/);
  });

  it('a dropped domain loses its certificate in Caddy and its row', async () => {
    await db.service.update({ where: { id: service.serviceId }, data: { customDomains: [] } });
    expect(await app.certificates.runDomainsOnce()).toEqual({ issued: [], loaded: [], removed: [SHOP] });
    expect(await db.tlsCertificate.findUnique({ where: { name: SHOP } })).toBeNull();
    expect((await caddyAdmin.call('GET', `/id/hostctl-tls-${worker.prefix}--${SHOP}`)).status).toBe(404);
    // The wildcard is never taken for a custom domain's.
    expect(await db.tlsCertificate.findUnique({ where: { name: WILDCARD } })).not.toBeNull();
  });
});
