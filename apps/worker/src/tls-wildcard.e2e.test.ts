import { randomUUID } from 'node:crypto';
import { describe, expect, it, beforeAll } from 'vitest';
import { createAdvisoryLocks } from '@hostctl/db';
import { silentLogger, testConfig, waitForDeployment } from './testing/fixtures.js';
import { createCertificates } from './tls/tls-wiring.js';
import { CADDY_ADMIN_URL, caddyAdmin, PDNS_API_URL, pdnsApiKey } from './testing/network-fixtures.js';
import {
  PEBBLE_DIRECTORY_URL,
  pebbleListenerCertFile,
  pebbleRoot,
  plainHttp,
  viaCaddyTls,
} from './testing/tls-fixtures.js';
import { TEST_IMAGE } from './testing/test-env.js';
import { useWorkerApp } from './testing/worker-fixture.js';

// The wildcard of the apps domain from the real pebble through DNS-01 on the real PowerDNS,
// loaded into the real Caddy (docs/tls.md): two services answer over HTTPS with the one
// certificate, a second round orders nothing, and a renewal replaces what Caddy serves.
const WILDCARD = '*.apps.localhost';
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
const worker = useWorkerApp('tls', {
  env,
  app: { observe: false, readiness: { timeoutMs: 20_000, stableMs: 300 } },
  beforeStart: async (): Promise<void> => {
    await db.tlsCertificate.deleteMany({ where: { name: WILDCARD } });
  },
  cleanup: async (): Promise<void> => {
    await caddyAdmin.removeId(`hostctl-tls-${worker.prefix}`).catch(() => undefined);
    await db.tlsCertificate.deleteMany({ where: { name: WILDCARD } });
  },
});
const { prefix, db, app } = worker;

const challengeRecords = async (): Promise<string[]> => {
  const response = await fetch(`${PDNS_API_URL}/api/v1/servers/localhost/zones/apps.localhost.`, {
    headers: { 'X-API-Key': pdnsApiKey() },
  });
  const zone = (await response.json()) as {
    rrsets: { name: string; type: string; records: { content: string }[] }[];
  };
  return zone.rrsets
    .filter((r) => r.name === '_acme-challenge.apps.localhost.' && r.type === 'TXT')
    .flatMap((r) => r.records.map((record) => record.content));
};

describe('one wildcard certificate for every service URL', () => {
  let root: string;
  const names: string[] = [];

  beforeAll(async () => {
    root = await pebbleRoot();
  });

  it('is ordered through DNS-01 once and serves two new services over HTTPS', async () => {
    const compose = `services:\n  web:\n    image: ${TEST_IMAGE}\n    ports: ["8080"]\n`;
    const services = [await worker.deploy({ compose }), await worker.deploy({ compose })];
    for (const service of services) {
      expect((await waitForDeployment(db, service.deploymentId)).status).toBe('succeeded');
      names.push((await db.service.findUniqueOrThrow({ where: { id: service.serviceId } })).name);
    }
    const before = await challengeRecords();

    const outcome = await app.certificates.runOnce();
    const stored = await db.tlsCertificate.findUniqueOrThrow({ where: { name: WILDCARD } });
    // The CA's or the DNS server's words on a failure are in last_error: shown when this fails.
    expect({ ...outcome, lastError: stored.lastError }).toEqual({
      issued: true,
      loaded: true,
      lastError: null,
    });
    expect(stored).toMatchObject({ issuedCount: 1, lastError: null });
    expect(stored.issuer).toMatch(/Pebble/);
    const lifetime = stored.notAfter!.getTime() - stored.notBefore!.getTime();
    expect(stored.renewAfter!.getTime() - stored.notBefore!.getTime()).toBeCloseTo((lifetime * 2) / 3, -3);
    // The keys are sealed at rest (docs/secrets.md): the raw columns are envelopes, not PEM.
    const [raw] = await db.$queryRaw<{ key: string; account: string }[]>`
      SELECT private_key_pem::text AS key, account_key_pem::text AS account
      FROM tls_certificates WHERE name = ${WILDCARD}`;
    expect(raw?.key).toContain('hostctl/aes-256-gcm/1');
    expect(`${raw?.key} ${raw?.account}`).not.toContain('PRIVATE KEY');
    // The platform removed the challenge value it wrote; anything another order had there stays.
    expect(await challengeRecords()).toEqual(before);

    for (const name of names) {
      const answer = await viaCaddyTls(`${name}.apps.localhost`, root);
      expect(answer).toMatchObject({ status: 200, body: 'hello from busybox\n' });
      expect(answer.certificate.subjectaltname).toBe(`DNS:${WILDCARD}`);
      // Plain HTTP on the same route answers 308 to HTTPS (the default, docs/tls.md#https-and-plain-http).
      const plain = await plainHttp(`${name}.apps.localhost`);
      expect({ status: plain.status, location: plain.headers.location }).toEqual({
        status: 308,
        location: `https://${name}.apps.localhost/`,
      });
    }
    // A name no service has is still the catch-all's 404, over TLS too.
    expect(await viaCaddyTls(`nope-${randomUUID().slice(0, 6)}.apps.localhost`, root)).toMatchObject({
      status: 404,
    });
  });

  it('a second round orders nothing and loads nothing: the certificate is current', async () => {
    expect(await app.certificates.runOnce()).toEqual({ issued: false, loaded: false });
    expect((await db.tlsCertificate.findUniqueOrThrow({ where: { name: WILDCARD } })).issuedCount).toBe(1);
  });

  it('at its renewal time a new certificate is ordered and Caddy serves it', async () => {
    const old = await viaCaddyTls(`${names[0]}.apps.localhost`, root);
    await db.tlsCertificate.update({
      where: { name: WILDCARD },
      data: { renewAfter: new Date(Date.now() - 1000) },
    });
    const outcome = await app.certificates.runOnce();
    const { lastError, issuedCount } = await db.tlsCertificate.findUniqueOrThrow({
      where: { name: WILDCARD },
    });
    expect({ ...outcome, lastError, issuedCount }).toEqual({
      issued: true,
      loaded: true,
      lastError: null,
      issuedCount: 2,
    });
    const renewed = await viaCaddyTls(`${names[0]}.apps.localhost`, root);
    expect(renewed.status).toBe(200);
    expect(renewed.certificate.serialNumber).not.toBe(old.certificate.serialNumber);
  });

  it('two replicas due at the same time: one orders, the other orders nothing', async () => {
    const locks = createAdvisoryLocks({ url: testConfig(prefix).DATABASE_URL, max: 4 });
    try {
      const replicas = [0, 1].map(() =>
        createCertificates(testConfig(prefix, env), { db, locks, logger: silentLogger }),
      );
      await db.tlsCertificate.update({
        where: { name: WILDCARD },
        data: { renewAfter: new Date(Date.now() - 1000) },
      });
      const outcomes = await Promise.all(replicas.map((replica) => replica.runOnce()));
      expect(outcomes.filter((outcome) => outcome?.issued)).toHaveLength(1);
      expect((await db.tlsCertificate.findUniqueOrThrow({ where: { name: WILDCARD } })).issuedCount).toBe(3);
    } finally {
      await locks.close();
    }
  });

  it('the CA unreachable at renewal: the error is recorded and the current certificate keeps serving', async () => {
    const locks = createAdvisoryLocks({ url: testConfig(prefix).DATABASE_URL, max: 2 });
    try {
      // Port 9 on loopback: nothing listens, as when the CA is down.
      const caDown = createCertificates(
        testConfig(prefix, { ...env, ACME_DIRECTORY_URL: 'https://127.0.0.1:9/dir' }),
        {
          db,
          locks,
          logger: silentLogger,
        },
      );
      const before = await db.tlsCertificate.findUniqueOrThrow({ where: { name: WILDCARD } });
      const serving = await viaCaddyTls(`${names[0]}.apps.localhost`, root);
      await db.tlsCertificate.update({
        where: { name: WILDCARD },
        data: { renewAfter: new Date(Date.now() - 1000) },
      });

      expect(await caDown.runOnce()).toEqual({ issued: false, loaded: false });
      const after = await db.tlsCertificate.findUniqueOrThrow({ where: { name: WILDCARD } });
      expect(after.lastError).toMatch(/ECONNREFUSED/);
      expect(after).toMatchObject({ certificatePem: before.certificatePem, issuedCount: before.issuedCount });
      const still = await viaCaddyTls(`${names[0]}.apps.localhost`, root);
      expect(still.status).toBe(200);
      expect(still.certificate.serialNumber).toBe(serving.certificate.serialNumber);
    } finally {
      await locks.close();
    }
  });
});
