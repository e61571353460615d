import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServicesStore } from '@hostctl/db';
import { createHarness, json, type Harness } from '../../test-support/harness.js';

/**
 * Custom domains are unique among live services by a database key (service_custom_domains), not
 * by a read before the write; and only real, foreign domain names are accepted.
 */
let h: Harness;

beforeAll(async () => {
  h = await createHarness({
    PUBLIC_URL: 'https://panel.hostctl.test',
    OIDC_ISSUER: 'https://id.hostctl.test',
  });
}, 60_000);
afterAll(async () => h?.close());

const fresh = (label = 'shop') => `${label}-${randomUUID().slice(0, 8)}.example.com`;

/** A customer with its own operator and service: a stranger to every other tenant. */
async function tenant() {
  const customer = await h.customer();
  const user = await h.user('operator', customer.id);
  const service = await h.createService(user.auth, { customer_id: customer.id });
  return { auth: user.auth, serviceId: service.id, customerId: customer.id };
}

const patch = (auth: string, id: string, custom_domains: string[]) =>
  h.app.inject({
    method: 'PATCH',
    url: `/api/services/${id}`,
    headers: { authorization: auth },
    payload: { custom_domains },
  });

describe('one live service per custom domain, under concurrency', () => {
  it('N parallel PATCHes from different customers: exactly one 200, the others 409', async () => {
    const tenants = await Promise.all(Array.from({ length: 8 }, tenant));
    const domain = fresh();
    const responses = await Promise.all(tenants.map((t) => patch(t.auth, t.serviceId, [domain])));
    const statuses = responses.map((r) => r.statusCode).sort();
    expect(statuses).toEqual([200, 409, 409, 409, 409, 409, 409, 409]);
    for (const response of responses.filter((r) => r.statusCode === 409)) {
      expect(String(response.headers['content-type'])).toMatch(/^application\/problem\+json/);
      expect(json(response)).toMatchObject({ code: 'conflict' });
    }
  });

  it('the key decides even when no read comes first: parallel store writes, one wins', async () => {
    // updateAndRedeploy uses Prisma only; the SQL pool argument is not reached.
    const store = createServicesStore(h.container.db, h.container.db as never, {
      openAll: (row) => Promise.resolve(row),
    });
    const tenants = await Promise.all(Array.from({ length: 6 }, tenant));
    const domain = fresh('raw');
    const results = await Promise.allSettled(
      tenants.map((t) => store.updateAndRedeploy(t.serviceId, t.customerId, { customDomains: [domain] })),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
  });

  it.each([
    ['a different case', (d: string) => d.toUpperCase()],
    ['mixed case', (d: string) => d.replace(/^./, (c) => c.toUpperCase())],
  ])('%s of a claimed domain is the same domain → 409', async (_name, variant) => {
    const [a, b] = [await tenant(), await tenant()];
    const domain = fresh();
    expect((await patch(a.auth, a.serviceId, [domain])).statusCode).toBe(200);
    expect((await patch(b.auth, b.serviceId, [variant(domain)])).statusCode).toBe(409);
  });

  it('an IDN is stored as punycode, and its Unicode and punycode forms are one domain', async () => {
    const [a, b] = [await tenant(), await tenant()];
    const label = `bücher-${randomUUID().slice(0, 6)}`;
    const response = await patch(a.auth, a.serviceId, [`${label}.example`]);
    expect(response.statusCode, response.body).toBe(200);
    const stored = json<{ custom_domains: string[] }>(response).custom_domains[0]!;
    expect(stored).toMatch(/^xn--/);
    expect((await patch(b.auth, b.serviceId, [stored])).statusCode).toBe(409);
    expect((await patch(b.auth, b.serviceId, [label.toUpperCase() + '.EXAMPLE'])).statusCode).toBe(409);
  });

  it('a deleted service releases its domains; re-saving one own domain is not a conflict', async () => {
    const [a, b] = [await tenant(), await tenant()];
    const domain = fresh();
    expect((await patch(a.auth, a.serviceId, [domain])).statusCode).toBe(200);
    expect((await patch(a.auth, a.serviceId, [domain, fresh()])).statusCode).toBe(200);
    const removed = await h.app.inject({
      method: 'DELETE',
      url: `/api/services/${a.serviceId}`,
      headers: { authorization: a.auth },
    });
    expect(removed.statusCode).toBeLessThan(300);
    expect((await patch(b.auth, b.serviceId, [domain])).statusCode).toBe(200);
  });
});

describe('custom domain syntax and reserved names', () => {
  it.each([
    ['a trailing dot', 'shop.example.com.'],
    ['an IPv4 literal', '192.168.1.10'],
    ['a dotted IPv4 with a numeric top label', '10.0.0.1'],
    ['an IPv6 literal', '[::1]'],
    ['an IPv6 literal without brackets', '::1'],
    ['a single label', 'intranet'],
    ['localhost', 'localhost'],
    ['a name under localhost', 'evil.localhost'],
    ['LOCALHOST in capitals', 'App.LocalHost'],
    ['the apps domain itself', 'apps.localhost'],
    ['a service name under the apps domain', 'victim.apps.localhost'],
    ['the API host (PUBLIC_URL)', 'panel.hostctl.test'],
    ['the API host in capitals', 'PANEL.hostctl.test'],
    ['the OIDC issuer host', 'id.hostctl.test'],
    ['a label over 63 characters', `${'a'.repeat(64)}.example.com`],
    ['a name over 253 characters', `${'a.'.repeat(127)}com`],
    ['an empty label', 'a..example.com'],
    ['a leading hyphen', '-a.example.com'],
    ['a trailing hyphen', 'a-.example.com'],
    ['an underscore', 'a_b.example.com'],
    ['a wildcard', '*.example.com'],
    ['a scheme', 'https://example.com'],
    ['a port', 'example.com:8080'],
    ['userinfo', 'user@example.com'],
    ['a path', 'example.com/x'],
    ['whitespace', 'exa mple.com'],
    ['a numeric top-level label', 'example.123'],
    ['invalid punycode', 'xn--zz.example'],
    ['a NUL', 'a\u0000.example.com'],
  ])('refuses %s with 400 naming the entry', async (_name, domain) => {
    const { auth, serviceId } = await tenant();
    const response = await patch(auth, serviceId, ['ok-first.example.com', domain]);
    expect(response.statusCode, response.body).toBe(400);
    const body = json<{ errors: { path: string }[] }>(response);
    expect(body.errors.map((e) => e.path)).toContain('/body/custom_domains/1');
  });

  it('refuses two spellings of one name in the same request', async () => {
    const { auth, serviceId } = await tenant();
    const domain = fresh();
    const response = await patch(auth, serviceId, [domain, domain.toUpperCase()]);
    expect(response.statusCode).toBe(400);
  });

  it('stores the normalised lower-case name', async () => {
    const { auth, serviceId } = await tenant();
    const domain = fresh();
    const response = await patch(auth, serviceId, [domain.toUpperCase()]);
    expect(json<{ custom_domains: string[] }>(response).custom_domains).toEqual([domain]);
  });
});
