import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { createHarness, json, type Harness } from '../../test-support/harness.js';

/**
 * Issue 31: API keys and push webhooks are quotas of the plans (docs/quotas.md). A key counts
 * against the customer it is limited to, else its owner's; a webhook against its service's
 * customer. Refusals are the one 409 quota_exceeded problem; lowering a quota never revokes.
 */
let h: Harness;
let admin: { auth: string };

beforeAll(async () => {
  h = await createHarness({ GIT_ALLOWED_HOSTS: '127.0.0.1:40000' });
  admin = await h.user('admin');
});
afterAll(async () => h?.close());

async function setQuota(customerId: string, overrides: Record<string, number | null>) {
  const response = await h.app.inject({
    method: 'PUT',
    url: `/api/customers/${customerId}/quota`,
    headers: { authorization: admin.auth },
    payload: { plan: 'default', overrides },
  });
  expect(response.statusCode).toBe(200);
  return json<{ limits: Record<string, number | null>; usage: Record<string, number> }>(response);
}

const mintKey = (auth: string, payload: Record<string, unknown> = {}) =>
  h.app.inject({
    method: 'POST',
    url: '/api/auth/api-keys',
    headers: { authorization: auth },
    payload: { name: 'ci', actions: ['read'], ...payload },
  });

function expectRefusal(response: LightMyRequestResponse, quota: Record<string, unknown>) {
  expect(response.statusCode).toBe(409);
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  const problem = json<{ detail: string }>(response);
  expect(problem).toMatchObject({ code: 'quota_exceeded', status: 409, title: 'Quota exceeded', quota });
  expect(problem.detail).toContain(`quota ${String(quota.name)} exceeded: the customer uses`);
}

describe('the default plan', () => {
  it('names api_keys (100) and webhooks (unlimited) as migrated', async () => {
    const plans = json<{ data: { name: string; limits: Record<string, unknown> }[] }>(
      await h.app.inject({ method: 'GET', url: '/api/quota-plans', headers: { authorization: admin.auth } }),
    );
    const plan = plans.data.find((row) => row.name === 'default');
    expect(plan?.limits).toMatchObject({ api_keys: 100, webhooks: null });
  });
});

describe('api_keys', () => {
  it("counts the customer's users' keys and keys limited to it, not revoked, expired or others' keys", async () => {
    const customerId = (await h.customer()).id;
    const operator = await h.user('operator', customerId); // 1 key
    const other = await h.user('operator', (await h.customer()).id); // another customer's key
    expect((await mintKey(admin.auth, { customer_id: customerId })).statusCode).toBe(201); // 2
    expect((await mintKey(other.auth)).statusCode).toBe(201);
    const revoked = json<{ id: string }>(await mintKey(operator.auth)); // 3, then revoked
    const gone = await h.app.inject({
      method: 'DELETE',
      url: `/api/auth/api-keys/${revoked.id}`,
      headers: { authorization: operator.auth },
    });
    expect(gone.statusCode).toBe(204);
    const expiring = json<{ id: string }>(await mintKey(operator.auth)); // 3, then expired
    await h.container.db.apiKey.update({
      where: { id: expiring.id },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    const quota = await setQuota(customerId, { api_keys: 3 });
    expect(quota.usage.api_keys).toBe(2);
    expect((await mintKey(operator.auth)).statusCode).toBe(201); // 3
    expectRefusal(await mintKey(operator.auth), {
      name: 'api_keys',
      limit: 3,
      usage: 3,
      requested: 1,
      customer_id: customerId,
    });
    // An unscoped admin's key limited to the customer is the customer's too.
    expectRefusal(await mintKey(admin.auth, { customer_id: customerId }), { name: 'api_keys', limit: 3 });
    // The unscoped admin's own keys count against no customer.
    expect((await mintKey(admin.auth)).statusCode).toBe(201);
  });

  it('lowered below usage: refuses new keys, revokes none', async () => {
    const customerId = (await h.customer()).id;
    const operator = await h.user('operator', customerId);
    const minted = json<{ key: string }>(await mintKey(operator.auth));
    const lowered = await setQuota(customerId, { api_keys: 1 });
    expect(lowered.usage.api_keys).toBe(2);
    expectRefusal(await mintKey(operator.auth), { name: 'api_keys', limit: 1, usage: 2, requested: 1 });
    const stillWorks = await h.app.inject({
      method: 'GET',
      url: `/api/customers/${customerId}/quota`,
      headers: { authorization: `Bearer ${minted.key}` },
    });
    expect(stillWorks.statusCode).toBe(200);
  });
});

describe('webhooks', () => {
  const gitService = (auth: string, customerId: string) =>
    h.createService(auth, {
      customer_id: customerId,
      deploy_method: 'git',
      git_url: 'git://127.0.0.1:40000/repo.git',
      git_branch: 'main',
    });
  const hook = (auth: string, id: string, method: 'POST' | 'DELETE' = 'POST') =>
    h.app.inject({ method, url: `/api/services/${id}/webhook`, headers: { authorization: auth } });

  it('a new hook past the limit is refused; a rotation passes; removing one frees room', async () => {
    const customerId = (await h.customer()).id;
    const operator = await h.user('operator', customerId);
    const [a, b] = [await gitService(operator.auth, customerId), await gitService(operator.auth, customerId)];
    await setQuota(customerId, { webhooks: 1 });
    expect((await hook(operator.auth, a.id)).statusCode).toBe(201);
    expectRefusal(await hook(operator.auth, b.id), {
      name: 'webhooks',
      limit: 1,
      usage: 1,
      requested: 1,
      customer_id: customerId,
    });
    expect(json(await hook(operator.auth, a.id))).toMatchObject({ rotated: true });
    expect((await hook(operator.auth, a.id, 'DELETE')).statusCode).toBe(204);
    expect((await hook(operator.auth, b.id)).statusCode).toBe(201);
  });

  it("a deleted service's hook stops counting", async () => {
    const customerId = (await h.customer()).id;
    const operator = await h.user('operator', customerId);
    const [a, b] = [await gitService(operator.auth, customerId), await gitService(operator.auth, customerId)];
    await setQuota(customerId, { webhooks: 1 });
    expect((await hook(operator.auth, a.id)).statusCode).toBe(201);
    const deleted = await h.app.inject({
      method: 'DELETE',
      url: `/api/services/${a.id}`,
      headers: { authorization: operator.auth },
    });
    expect(deleted.statusCode).toBeLessThan(300);
    expect((await hook(operator.auth, b.id)).statusCode).toBe(201);
  });
});
