import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, json, uniqueName, type Harness } from '../../test-support/harness.js';

/** Plans and per-customer quotas through the API (docs/quotas.md); who may do what: route-table.ts. */
let h: Harness;
let admin: { auth: string };

beforeAll(async () => {
  h = await createHarness();
  admin = await h.user('admin');
});
afterAll(async () => h?.close());

const call = (method: 'GET' | 'PUT' | 'DELETE', url: string, payload?: object, auth = admin.auth) =>
  h.app.inject({ method, url, headers: { authorization: auth }, ...(payload ? { payload } : {}) });

interface Quota {
  plan: string;
  overrides: Record<string, number | null>;
  limits: Record<string, number | null>;
  usage: Record<string, number>;
}

describe('quota plans', () => {
  it('a plan is created, replaced, listed with its customers, and deleted once unused', async () => {
    const name = uniqueName('plan');
    const created = await call('PUT', `/api/quota-plans/${name}`, { limits: { services: 3, cpus: 1.5 } });
    expect(created.statusCode).toBe(201);
    expect(json(created)).toMatchObject({ name, limits: { services: 3, cpus: 1.5 }, customers: 0 });
    const replaced = await call('PUT', `/api/quota-plans/${name}`, { limits: { services: null } });
    expect(replaced.statusCode).toBe(200);
    expect(json<{ limits: object }>(replaced).limits).toEqual({ services: null });

    const customerId = (await h.customer()).id;
    expect((await call('PUT', `/api/customers/${customerId}/quota`, { plan: name })).statusCode).toBe(200);
    const list = json<{ data: { name: string; customers: number }[] }>(await call('GET', '/api/quota-plans'));
    expect(list.data.find((plan) => plan.name === name)).toMatchObject({ customers: 1 });
    expect(list.data.map((plan) => plan.name)).toContain('default');

    const inUse = await call('DELETE', `/api/quota-plans/${name}`);
    expect(inUse.statusCode).toBe(409);
    expect(json<{ detail: string }>(inUse).detail).toMatch(/used by customers/);
    await call('PUT', `/api/customers/${customerId}/quota`, { plan: 'default' });
    expect((await call('DELETE', `/api/quota-plans/${name}`)).statusCode).toBe(204);
    expect((await call('DELETE', `/api/quota-plans/${name}`)).statusCode).toBe(404);
  });

  it('the default plan cannot be deleted', async () => {
    const response = await call('DELETE', '/api/quota-plans/default');
    expect(response.statusCode).toBe(409);
    expect(json<{ detail: string }>(response).detail).toMatch(/default quota plan cannot be deleted/);
  });

  it.each([
    ['an unknown quota', { limits: { disk_gb: 3 } }, '/body/limits'],
    ['a negative limit', { limits: { services: -1 } }, '/body/limits/services'],
    ['a fractional count', { limits: { services: 1.5 } }, '/body/limits/services'],
    ['a string limit', { limits: { memory_mb: 'lots' } }, '/body/limits/memory_mb'],
  ])('refuses %s with 400 naming the field', async (_label, payload, path) => {
    const response = await call('PUT', `/api/quota-plans/${uniqueName('plan')}`, payload);
    expect(response.statusCode).toBe(400);
    expect(
      json<{ errors: { path: string }[] }>(response)
        .errors.map((e) => e.path)
        .join(' '),
    ).toContain(path);
  });

  it('refuses a plan name that is not a lower-case slug', async () => {
    expect((await call('PUT', '/api/quota-plans/Gold%20Plan', { limits: {} })).statusCode).toBe(400);
  });
});

describe("a customer's quota", () => {
  it('layers default plan, named plan and overrides; null is unlimited; usage is counted', async () => {
    const plan = uniqueName('plan');
    await call('PUT', `/api/quota-plans/${plan}`, { limits: { services: 10, memory_mb: 4096 } });
    const customerId = (await h.customer()).id;
    const set = await call('PUT', `/api/customers/${customerId}/quota`, {
      plan,
      overrides: { memory_mb: null, deploys_per_hour: 30 },
    });
    expect(set.statusCode).toBe(200);
    const viewer = await h.user('viewer', customerId);
    await h.createService(admin.auth, { customer_id: customerId });
    const read = await call('GET', `/api/customers/${customerId}/quota`, undefined, viewer.auth);
    expect(read.statusCode).toBe(200);
    const quota = json<Quota>(read);
    expect(quota.plan).toBe(plan);
    expect(quota.overrides).toEqual({ memory_mb: null, deploys_per_hour: 30 });
    expect(quota.limits).toMatchObject({
      services: 10,
      memory_mb: null,
      deploys_per_hour: 30,
      notification_subscriptions: 25,
    });
    expect(quota.usage).toMatchObject({
      services: 1,
      containers: 1,
      memory_mb: 512,
      cpus: 1,
      deploys_per_hour: 1,
    });
  });

  it("another customer's principals get 404, like for the customer itself", async () => {
    const customerId = (await h.customer()).id;
    const stranger = await h.user('admin', (await h.customer()).id);
    expect(
      (await call('GET', `/api/customers/${customerId}/quota`, undefined, stranger.auth)).statusCode,
    ).toBe(404);
  });

  it('a scoped admin may read its own quota but not change it', async () => {
    const customerId = (await h.customer()).id;
    const own = await h.user('admin', customerId);
    expect((await call('GET', `/api/customers/${customerId}/quota`, undefined, own.auth)).statusCode).toBe(
      200,
    );
    const refused = await call('PUT', `/api/customers/${customerId}/quota`, { plan: 'default' }, own.auth);
    expect(refused.statusCode).toBe(403);
    expect(json<{ detail: string }>(refused).detail).toMatch(/unscoped admins/);
  });

  it('an unknown plan → 400 naming /body/plan; an unknown customer → 404', async () => {
    const customerId = (await h.customer()).id;
    const unknownPlan = await call('PUT', `/api/customers/${customerId}/quota`, { plan: 'no-such-plan' });
    expect(unknownPlan.statusCode).toBe(400);
    expect(json(unknownPlan)).toMatchObject({ errors: [{ path: '/body/plan' }] });
    expect((await call('PUT', '/api/customers/no-such-customer/quota', { plan: 'default' })).statusCode).toBe(
      404,
    );
    expect((await call('GET', '/api/customers/no-such-customer/quota')).statusCode).toBe(404);
  });
});
