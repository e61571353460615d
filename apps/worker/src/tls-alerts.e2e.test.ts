import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { createAdvisoryLocks } from '@hostctl/db';
import { silentLogger, testConfig } from './testing/fixtures.js';
import { CADDY_ADMIN_URL, caddyAdmin, PDNS_API_URL, pdnsApiKey } from './testing/network-fixtures.js';
import {
  PEBBLE_DIRECTORY_URL,
  pebbleListenerCertFile,
  pebbleRoot,
  viaCaddyTls,
} from './testing/tls-fixtures.js';
import { createCertificates } from './tls/tls-wiring.js';
import { useWorkerApp } from './testing/worker-fixture.js';

// Renewal failures are loud (issue 34, docs/tls.md#alerts), against the real pebble, PowerDNS
// and Caddy: a CA that cannot be reached leaves the old certificate serving and sends
// certificate.renewal_failed once per failure streak; a certificate close to its not_after sends
// certificate.expiring once, however many replicas look; both only to the operator's customer;
// /metrics shows each certificate's expiry.
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
  PLATFORM_NOTIFICATIONS_CUSTOMER_ID: opsCustomerId,
};
const customers: string[] = [];
const worker = useWorkerApp('tlsalert', {
  env,
  app: { observe: false, readiness: { timeoutMs: 20_000, stableMs: 300 } },
  beforeStart: async (): Promise<void> => {
    await db.tlsCertificate.deleteMany({ where: { name: WILDCARD } });
  },
  cleanup: async (): Promise<void> => {
    await caddyAdmin.removeId(`hostctl-tls-${worker.prefix}`).catch(() => undefined);
    await db.tlsCertificate.deleteMany({ where: { name: WILDCARD } });
    await db.customer.deleteMany({ where: { id: { in: customers } } });
  },
});
const { prefix, db, app } = worker;

/** A subscription to every event, certificate ones included (written as a row: the API refuses them to a tenant). */
async function subscribedCustomer(id: string = randomUUID()) {
  await db.customer.create({ data: { id, name: `tls-alerts-${id.slice(0, 8)}` } });
  customers.push(id);
  return db.notificationSubscription.create({
    data: {
      customerId: id,
      url: `https://alerts-${id.slice(0, 8)}.invalid/hook`,
      events: ['certificate.renewal_failed', 'certificate.expiring', 'deployment.failed'],
      secret: `whsec_${randomUUID()}`,
    },
  });
}

const deliveries = (subscriptionId: string, event: string) =>
  db.notificationDelivery.findMany({ where: { subscriptionId, event }, orderBy: { createdAt: 'asc' } });

const servingSerial = async (root: string) =>
  (await viaCaddyTls(`nothing-${randomUUID().slice(0, 6)}.apps.localhost`, root)).certificate.serialNumber;

async function metricsText(): Promise<string> {
  return app.metrics.registry.metrics();
}

/** A replica whose CA is down (nothing listens on loopback port 9), sharing the database. */
function withCaDown<T>(run: (replica: ReturnType<typeof createCertificates>) => Promise<T>): Promise<T> {
  const locks = createAdvisoryLocks({ url: testConfig(prefix).DATABASE_URL, max: 2 });
  const replica = createCertificates(
    testConfig(prefix, { ...env, ACME_DIRECTORY_URL: 'https://127.0.0.1:9/dir' }),
    { db, locks, logger: silentLogger },
  );
  return run(replica).finally(() => locks.close());
}

/** One round of the app's keeper that must order: the CA's words are in the failure when it does not. */
async function expectIssued(): Promise<void> {
  const outcome = await app.certificates.runOnce();
  const { lastError } = await db.tlsCertificate.findUniqueOrThrow({ where: { name: WILDCARD } });
  expect({ ...outcome, lastError }).toEqual({ issued: true, loaded: true, lastError: null });
}

const dueNow = () =>
  db.tlsCertificate.update({ where: { name: WILDCARD }, data: { renewAfter: new Date(Date.now() - 1000) } });

describe('loud renewal failures', () => {
  let root: string;
  let ops: { id: string };
  let tenant: { id: string };

  beforeAll(async () => {
    root = await pebbleRoot();
    ops = await subscribedCustomer(opsCustomerId);
    tenant = await subscribedCustomer();
  });

  it('a certificate from pebble shows its expiry on /metrics', async () => {
    await expectIssued();
    const stored = await db.tlsCertificate.findUniqueOrThrow({ where: { name: WILDCARD } });
    const text = await metricsText();
    expect(text).toContain(
      `hostctl_certificate_not_after_seconds{name="${WILDCARD}"} ${stored.notAfter!.getTime() / 1000}`,
    );
    expect(text).toContain(`hostctl_certificate_renewal_failing{name="${WILDCARD}"} 0`);
  });

  it('the CA unreachable: the old certificate keeps serving, renewal_failed goes to the operator once per streak', async () => {
    const serial = await servingSerial(root);
    await dueNow();
    await withCaDown(async (replica) => {
      expect(await replica.runOnce()).toEqual({ issued: false, loaded: false });
      expect(await replica.runOnce()).toEqual({ issued: false, loaded: false });
    });
    expect(await servingSerial(root)).toBe(serial);

    const sent = await deliveries(ops.id, 'certificate.renewal_failed');
    expect(sent).toHaveLength(1); // two failed rounds, one streak
    expect(sent[0]?.body).toMatchObject({
      event: 'certificate.renewal_failed',
      certificate: { name: WILDCARD, last_error: expect.stringMatching(/ECONNREFUSED/) },
      message: expect.stringMatching(/keeps serving until/),
    });
    expect(await deliveries(tenant.id, 'certificate.renewal_failed')).toHaveLength(0);
    expect(await metricsText()).toContain(`hostctl_certificate_renewal_failing{name="${WILDCARD}"} 1`);
  });

  it('a success ends the streak: the next failure is announced again', async () => {
    await expectIssued();
    expect(await metricsText()).toContain(`hostctl_certificate_renewal_failing{name="${WILDCARD}"} 0`);
    await dueNow();
    await withCaDown((replica) => replica.runOnce());
    expect(await deliveries(ops.id, 'certificate.renewal_failed')).toHaveLength(2);
  });

  it('14 days before not_after: certificate.expiring once, even with two replicas looking', async () => {
    expect(await deliveries(ops.id, 'certificate.expiring')).toHaveLength(0);
    // Pebble's certificates live for years: the row is moved close to its expiry instead, and
    // its renewal time into the future, as when renewals kept failing unnoticed.
    const notAfter = new Date(Date.now() + 10 * 24 * 3600 * 1000);
    await db.tlsCertificate.update({
      where: { name: WILDCARD },
      data: { notAfter, renewAfter: new Date(Date.now() + 3600 * 1000) },
    });
    const locks = createAdvisoryLocks({ url: testConfig(prefix).DATABASE_URL, max: 4 });
    try {
      const replicas = [0, 1].map(() =>
        createCertificates(testConfig(prefix, env), { db, locks, logger: silentLogger }),
      );
      await Promise.all(replicas.map((replica) => replica.runOnce()));
      await app.certificates.runOnce();
    } finally {
      await locks.close();
    }
    const sent = await deliveries(ops.id, 'certificate.expiring');
    expect(sent).toHaveLength(1);
    expect(sent[0]?.body).toMatchObject({
      event: 'certificate.expiring',
      certificate: { name: WILDCARD, not_after: notAfter.toISOString() },
      message: expect.stringMatching(/the last renewal failed: .*ECONNREFUSED/),
    });
    expect(await deliveries(tenant.id, 'certificate.expiring')).toHaveLength(0);
  });

  it('a renewed certificate far from its not_after sends no new warning', async () => {
    await dueNow();
    await expectIssued();
    expect(await deliveries(ops.id, 'certificate.expiring')).toHaveLength(1);
  });
});
