import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, json, type Harness } from '../../test-support/harness.js';

/** The platform's certificates as the API shows them: state and expiry, never key material. */
let h: Harness;
const name = `*.cert-${randomUUID().slice(0, 8)}.test`;

beforeAll(async () => {
  h = await createHarness();
  await h.container.db.tlsCertificate.create({
    data: {
      name,
      certificatePem: '-----BEGIN CERTIFICATE-----\nsecret-free\n-----END CERTIFICATE-----\n',
      privateKeyPem: '-----BEGIN PRIVATE KEY-----\nKEYMATERIAL\n-----END PRIVATE KEY-----\n',
      accountKeyPem: '-----BEGIN PRIVATE KEY-----\nACCOUNTKEY\n-----END PRIVATE KEY-----\n',
      issuer: 'CN=Pebble Intermediate CA',
      notBefore: new Date('2026-11-01T00:00:00Z'),
      notAfter: new Date('2027-01-30T00:00:00Z'),
      renewAfter: new Date('2026-12-31T00:00:00Z'),
      lastError: 'urn:ietf:params:acme:error:connection 400: refused',
      lastAttemptAt: new Date('2026-11-27T00:00:00Z'),
    },
  });
}, 60_000);
afterAll(async () => {
  await h?.container.db.tlsCertificate.deleteMany({ where: { name } });
  await h?.close();
});

describe('GET /api/certificates', () => {
  it('shows issuer, validity, renewal time and the last error to an unscoped operator, no key', async () => {
    const operator = await h.user('operator');
    const response = await h.app.inject({
      method: 'GET',
      url: '/api/certificates',
      headers: { authorization: operator.auth },
    });
    expect(response.statusCode).toBe(200);
    const item = json<{ data: Record<string, unknown>[] }>(response).data.find((c) => c.name === name);
    expect(item).toEqual({
      name,
      issuer: 'CN=Pebble Intermediate CA',
      not_before: '2026-11-01T00:00:00.000Z',
      not_after: '2027-01-30T00:00:00.000Z',
      renew_after: '2026-12-31T00:00:00.000Z',
      last_error: 'urn:ietf:params:acme:error:connection 400: refused',
      last_attempt_at: '2026-11-27T00:00:00.000Z',
    });
    expect(response.body).not.toMatch(/KEYMATERIAL|ACCOUNTKEY|BEGIN/);
  });

  it('is refused to a customer-scoped admin (platform-wide, like nodes)', async () => {
    const customer = await h.customer();
    const admin = await h.user('admin', customer.id);
    const response = await h.app.inject({
      method: 'GET',
      url: '/api/certificates',
      headers: { authorization: admin.auth },
    });
    expect(response.statusCode).toBe(403);
  });
});
