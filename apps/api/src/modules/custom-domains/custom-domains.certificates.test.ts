import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, json, type Harness } from '../../test-support/harness.js';

/**
 * A verified domain's certificate in the custom-domains API (docs/tls.md#custom-domain-certificates):
 * the worker's row for the name (made here as the worker writes it) turns `verified` into `active`
 * with the issuer, not_after and last error; a pending domain shows none, even when a row of that
 * name exists (a certificate is never shown to a service that has not proven the name).
 */
let h: Harness;
const names: string[] = [];

beforeAll(async () => {
  h = await createHarness();
}, 60_000);
afterAll(async () => {
  await h?.container.db.tlsCertificate.deleteMany({ where: { name: { in: names } } });
  await h?.close();
});

interface DomainItem {
  name: string;
  status: string;
  certificate: { issuer: string | null; not_after: string | null; last_error: string | null } | null;
}

async function serviceWith(domains: string[]) {
  const customer = await h.customer();
  const user = await h.user('operator', customer.id);
  const service = await h.createService(user.auth, { customer_id: customer.id });
  const response = await h.app.inject({
    method: 'PATCH',
    url: `/api/services/${service.id}`,
    headers: { authorization: user.auth },
    payload: { custom_domains: domains },
  });
  expect(response.statusCode).toBe(200);
  return { auth: user.auth, id: service.id };
}

const list = async (auth: string, id: string) => {
  const response = await h.app.inject({
    method: 'GET',
    url: `/api/services/${id}/custom-domains`,
    headers: { authorization: auth },
  });
  expect(response.statusCode).toBe(200);
  return json<{ data: DomainItem[] }>(response).data;
};

const fresh = (label: string) => {
  const name = `${label}-${randomUUID().slice(0, 8)}.example.com`;
  names.push(name);
  return name;
};

describe('the certificate of a custom domain', () => {
  it('verified without a certificate yet, then active with its issuer and expiry; a failed renewal shows its error', async () => {
    const domain = fresh('shop');
    const { auth, id } = await serviceWith([domain]);
    const db = h.container.db;
    await db.customDomainVerification.updateMany({
      where: { serviceId: id, name: domain },
      data: { status: 'verified', verifiedAt: new Date() },
    });
    expect((await list(auth, id))[0]).toMatchObject({ status: 'verified', certificate: null });

    // The first order failed: still verified, and the customer sees why.
    await db.tlsCertificate.create({
      data: { name: domain, lastError: 'connection refused', lastAttemptAt: new Date() },
    });
    expect((await list(auth, id))[0]).toMatchObject({
      status: 'verified',
      certificate: { issuer: null, not_after: null, last_error: 'connection refused' },
    });

    const notAfter = new Date(Date.now() + 90 * 86_400_000);
    await db.tlsCertificate.update({
      where: { name: domain },
      data: {
        certificatePem: '-----BEGIN CERTIFICATE-----',
        issuer: 'CN=Pebble Intermediate CA 1',
        notAfter,
        lastError: null,
      },
    });
    const [active] = await list(auth, id);
    expect(active).toMatchObject({
      status: 'active',
      certificate: {
        issuer: 'CN=Pebble Intermediate CA 1',
        not_after: notAfter.toISOString(),
        last_error: null,
      },
    });
    // Never the material itself.
    expect(JSON.stringify(active)).not.toContain('BEGIN CERTIFICATE');

    // A renewal failed: the old certificate keeps serving, so still active, with the error.
    await db.tlsCertificate.update({ where: { name: domain }, data: { lastError: 'CA unreachable' } });
    expect((await list(auth, id))[0]).toMatchObject({
      status: 'active',
      certificate: { last_error: 'CA unreachable' },
    });
  });

  it('a pending domain shows no certificate, even when one of that name exists', async () => {
    const domain = fresh('pending');
    const { auth, id } = await serviceWith([domain]);
    await h.container.db.tlsCertificate.create({
      data: {
        name: domain,
        certificatePem: '-----BEGIN CERTIFICATE-----',
        issuer: 'CN=someone',
        notAfter: new Date(),
      },
    });
    expect((await list(auth, id))[0]).toMatchObject({ status: 'pending', certificate: null });
  });
});
