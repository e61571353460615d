import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, json, type Harness } from '../../test-support/harness.js';
import { pdns, publish } from '../../test-support/powerdns.js';

/**
 * Proof of ownership of custom domains against the stack's real PowerDNS (127.0.0.1:5300, the
 * harness's DOMAIN_VERIFICATION_RESOLVER): a domain stays pending until its owner publishes the
 * token (TXT) or a CNAME to the service's apps name, and a verified domain is nobody else's.
 */
let h: Harness;
const zone = `cd-${randomUUID().slice(0, 8)}.test`;

beforeAll(async () => {
  h = await createHarness();
  expect(await pdns('POST', '/zones', { name: `${zone}.`, kind: 'Native', nameservers: [] })).toBe(201);
}, 60_000);
afterAll(async () => {
  await pdns('DELETE', `/zones/${zone}.`).catch(() => undefined);
  await h?.close();
});

interface DomainItem {
  name: string;
  status: 'pending' | 'verified';
  verification: { txt_name: string; txt_value: string; cname_target: string };
  last_error: string | null;
  checked_at: string | null;
  verified_at: string | null;
}

async function tenant() {
  const customer = await h.customer();
  const user = await h.user('operator', customer.id);
  const service = await h.createService(user.auth, { customer_id: customer.id });
  return { auth: user.auth, serviceId: service.id, name: service.name };
}

const patch = (auth: string, id: string, custom_domains: string[]) =>
  h.app.inject({
    method: 'PATCH',
    url: `/api/services/${id}`,
    headers: { authorization: auth },
    payload: { custom_domains },
  });
const list = async (auth: string, id: string) => {
  const response = await h.app.inject({
    method: 'GET',
    url: `/api/services/${id}/custom-domains`,
    headers: { authorization: auth },
  });
  expect(response.statusCode).toBe(200);
  return json<{ data: DomainItem[] }>(response).data;
};
const verify = (auth: string, id: string, domain: string) =>
  h.app.inject({
    method: 'POST',
    url: `/api/services/${id}/custom-domains/${domain}/verify`,
    headers: { authorization: auth },
  });
const fresh = (label: string) => `${label}-${randomUUID().slice(0, 6)}.${zone}`;

describe('a custom domain is pending until its owner proves it in DNS', () => {
  it('TXT: pending with the token, still pending without it or with a wrong one, verified with it', async () => {
    const a = await tenant();
    const domain = fresh('shop');
    expect((await patch(a.auth, a.serviceId, [domain])).statusCode).toBe(200);

    const [item] = await list(a.auth, a.serviceId);
    expect(item).toMatchObject({
      name: domain,
      status: 'pending',
      verification: {
        txt_name: `_hostctl-challenge.${domain}`,
        cname_target: `${a.name}.apps.localhost`,
      },
      last_error: null,
      checked_at: null,
      verified_at: null,
    });
    const token = item!.verification.txt_value;
    expect(token).toMatch(/^[0-9a-f]{32}$/);

    const none = await verify(a.auth, a.serviceId, domain);
    expect(none.statusCode).toBe(200);
    expect(json<DomainItem>(none)).toMatchObject({ status: 'pending', verified_at: null });
    expect(json<DomainItem>(none).last_error).toContain(`no TXT record _hostctl-challenge.${domain}`);
    expect(json<DomainItem>(none).checked_at).not.toBeNull();

    await publish(zone, `_hostctl-challenge.${domain}.`, 'TXT', ['"someone-elses-token"']);
    expect(json<DomainItem>(await verify(a.auth, a.serviceId, domain)).status).toBe('pending');

    await publish(zone, `_hostctl-challenge.${domain}.`, 'TXT', ['"unrelated"', `"${token}"`]);
    const proven = await verify(a.auth, a.serviceId, domain);
    expect(json<DomainItem>(proven)).toMatchObject({ status: 'verified', last_error: null });
    expect(json<DomainItem>(proven).verified_at).not.toBeNull();
    expect((await list(a.auth, a.serviceId))[0]).toMatchObject({
      status: 'verified',
      verification: { txt_value: token },
    });
  });

  it("CNAME to the service's apps name proves it; a CNAME to another service's name does not", async () => {
    const [a, b] = [await tenant(), await tenant()];
    const [mine, other] = [fresh('www'), fresh('blog')];
    expect((await patch(a.auth, a.serviceId, [mine, other])).statusCode).toBe(200);
    await publish(zone, `${mine}.`, 'CNAME', [`${a.name}.apps.localhost.`]);
    await publish(zone, `${other}.`, 'CNAME', [`${b.name}.apps.localhost.`]);
    expect(json<DomainItem>(await verify(a.auth, a.serviceId, mine)).status).toBe('verified');
    const refused = json<DomainItem>(await verify(a.auth, a.serviceId, other));
    expect(refused.status).toBe('pending');
    expect(refused.last_error).toContain(`no CNAME from ${other} to ${a.name}.apps.localhost`);
  });

  it("another customer's verified domain is a 409, in any spelling", async () => {
    const [a, b] = [await tenant(), await tenant()];
    const domain = fresh('taken');
    expect((await patch(a.auth, a.serviceId, [domain])).statusCode).toBe(200);
    const token = (await list(a.auth, a.serviceId))[0]!.verification.txt_value;
    await publish(zone, `_hostctl-challenge.${domain}.`, 'TXT', [`"${token}"`]);
    expect(json<DomainItem>(await verify(a.auth, a.serviceId, domain)).status).toBe('verified');

    for (const spelling of [domain, domain.toUpperCase()]) {
      const response = await patch(b.auth, b.serviceId, [spelling]);
      expect(response.statusCode).toBe(409);
      expect(json(response)).toMatchObject({ code: 'conflict' });
    }
    expect(await list(b.auth, b.serviceId)).toEqual([]);
  });

  it('keeps the token and the state while the domain stays in the list; dropping it forgets both', async () => {
    const a = await tenant();
    const [kept, dropped] = [fresh('kept'), fresh('dropped')];
    expect((await patch(a.auth, a.serviceId, [kept, dropped])).statusCode).toBe(200);
    const before = await list(a.auth, a.serviceId);
    const token = (name: string, items: DomainItem[]) =>
      items.find((item) => item.name === name)!.verification.txt_value;
    await publish(zone, `_hostctl-challenge.${kept}.`, 'TXT', [`"${token(kept, before)}"`]);
    expect(json<DomainItem>(await verify(a.auth, a.serviceId, kept)).status).toBe('verified');

    expect((await patch(a.auth, a.serviceId, [kept])).statusCode).toBe(200);
    expect((await patch(a.auth, a.serviceId, [kept, dropped])).statusCode).toBe(200);
    const after = await list(a.auth, a.serviceId);
    expect(after.find((item) => item.name === kept)).toMatchObject({ status: 'verified' });
    expect(token(kept, after)).toBe(token(kept, before));
    expect(after.find((item) => item.name === dropped)).toMatchObject({ status: 'pending' });
    expect(token(dropped, after)).not.toBe(token(dropped, before));
  });

  it("404 for a name that is not the service's, and for another customer's service", async () => {
    const [a, b] = [await tenant(), await tenant()];
    const domain = fresh('mine');
    expect((await patch(a.auth, a.serviceId, [domain])).statusCode).toBe(200);
    expect((await verify(a.auth, a.serviceId, fresh('unknown'))).statusCode).toBe(404);
    expect((await verify(b.auth, a.serviceId, domain)).statusCode).toBe(404);
    const peek = await h.app.inject({
      method: 'GET',
      url: `/api/services/${a.serviceId}/custom-domains`,
      headers: { authorization: b.auth },
    });
    expect(peek.statusCode).toBe(404);
    expect(peek.body).not.toContain(domain);
  });

  it('refuses a malformed domain in the path with a problem naming the field', async () => {
    const a = await tenant();
    const response = await verify(a.auth, a.serviceId, 'bad_name!');
    expect(response.statusCode).toBe(400);
    expect(JSON.stringify(json(response))).toContain('domain');
  });
});

describe('a DNS server that does not answer', () => {
  let dead: Harness;
  beforeAll(async () => {
    // Port 9 (discard) on loopback: nothing answers DNS there.
    dead = await createHarness({ DOMAIN_VERIFICATION_RESOLVER: '127.0.0.1:9' });
  }, 60_000);
  afterAll(async () => dead?.close());

  it('keeps the domain pending and says the lookup failed, not that the record is missing', async () => {
    const customer = await dead.customer();
    const user = await dead.user('operator', customer.id);
    const service = await dead.createService(user.auth, { customer_id: customer.id });
    const domain = fresh('dark');
    const patched = await dead.app.inject({
      method: 'PATCH',
      url: `/api/services/${service.id}`,
      headers: { authorization: user.auth },
      payload: { custom_domains: [domain] },
    });
    expect(patched.statusCode).toBe(200);
    const response = await dead.app.inject({
      method: 'POST',
      url: `/api/services/${service.id}/custom-domains/${domain}/verify`,
      headers: { authorization: user.auth },
    });
    expect(response.statusCode).toBe(200);
    expect(json<DomainItem>(response)).toMatchObject({ status: 'pending' });
    expect(json<DomainItem>(response).last_error).toMatch(/^DNS lookup failed/);
  }, 30_000);
});

describe('a claim left pending longer than DOMAIN_CLAIM_TTL_HOURS (168 h)', () => {
  /** The claim's age, set in its row: the API counts from the verification row's created_at. */
  const ageClaim = (serviceId: string, domain: string, hours: number) =>
    h.container.db.$executeRawUnsafe(
      `UPDATE custom_domain_verifications SET created_at = now() - interval '${Math.trunc(hours)} hours'
       WHERE service_id = $1 AND name = $2`,
      serviceId,
      domain,
    );
  const get = (auth: string, url: string) =>
    h.app.inject({ method: 'GET', url, headers: { authorization: auth } });

  it('holds the name until then; afterwards another customer takes it and the squatter loses only that name', async () => {
    const [squatter, owner] = [await tenant(), await tenant()];
    const [wanted, kept] = [fresh('wanted'), fresh('kept')];
    expect((await patch(squatter.auth, squatter.serviceId, [wanted, kept])).statusCode).toBe(200);
    await ageClaim(squatter.serviceId, wanted, 167);
    expect((await patch(owner.auth, owner.serviceId, [wanted])).statusCode).toBe(409);

    await ageClaim(squatter.serviceId, wanted, 169);
    await ageClaim(squatter.serviceId, kept, 169);
    expect((await patch(owner.auth, owner.serviceId, [wanted])).statusCode).toBe(200);
    const [mine] = await list(owner.auth, owner.serviceId);
    expect(mine).toMatchObject({ name: wanted, status: 'pending' });
    // The squatter keeps its other (also old, but uncontested) claim and is told what happened.
    expect((await list(squatter.auth, squatter.serviceId)).map((item) => item.name)).toEqual([kept]);
    const detail = json<{ custom_domains: string[] }>(
      await get(squatter.auth, `/api/services/${squatter.serviceId}`),
    );
    expect(detail.custom_domains).toEqual([kept]);
    const events = json<{ data: { message: string }[] }>(
      await get(squatter.auth, `/api/services/${squatter.serviceId}/events`),
    );
    expect(events.data.map((event) => event.message)).toContainEqual(
      expect.stringContaining(`Custom domain ${wanted} was released`),
    );
    // The new claimant's token is its own, not the squatter's.
    const token = mine!.verification.txt_value;
    await publish(zone, `_hostctl-challenge.${wanted}.`, 'TXT', [`"${token}"`]);
    expect(json<DomainItem>(await verify(owner.auth, owner.serviceId, wanted)).status).toBe('verified');
  });

  it('a verified domain never expires', async () => {
    const [a, b] = [await tenant(), await tenant()];
    const domain = fresh('proven');
    expect((await patch(a.auth, a.serviceId, [domain])).statusCode).toBe(200);
    const token = (await list(a.auth, a.serviceId))[0]!.verification.txt_value;
    await publish(zone, `_hostctl-challenge.${domain}.`, 'TXT', [`"${token}"`]);
    expect(json<DomainItem>(await verify(a.auth, a.serviceId, domain)).status).toBe('verified');
    await ageClaim(a.serviceId, domain, 10_000);
    expect((await patch(b.auth, b.serviceId, [domain])).statusCode).toBe(409);
    expect(await list(a.auth, a.serviceId)).toMatchObject([{ name: domain, status: 'verified' }]);
  });
});
