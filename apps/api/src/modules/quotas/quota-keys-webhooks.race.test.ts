import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { createHarness, json, type Harness } from '../../test-support/harness.js';

/**
 * The `api_keys` and `webhooks` quotas raced (issue 31; docs/quotas.md#concurrency-guarantee):
 * 10 creates sent at once over two API replicas sharing the database, with room for 3, create
 * exactly 3; the other 7 get the one `quota_exceeded` problem naming the quota. Keys are counted
 * per customer whoever of its users creates them, so the burst comes from two users.
 */
let replicas: [Harness, Harness];

beforeAll(async () => {
  replicas = [
    await createHarness({ GIT_ALLOWED_HOSTS: '127.0.0.1:40000' }),
    await createHarness({ GIT_ALLOWED_HOSTS: '127.0.0.1:40000' }),
  ];
});
afterAll(async () => Promise.all(replicas.map((h) => h.close())));

const ROOM = 3;

function expectRefusals(responses: LightMyRequestResponse[], quota: string, limit: number) {
  const statuses = responses.map((response) => response.statusCode);
  expect(statuses.filter((status) => status === 201)).toHaveLength(ROOM);
  expect(statuses.filter((status) => status === 409)).toHaveLength(10 - ROOM);
  for (const refused of responses.filter((response) => response.statusCode === 409)) {
    const problem = json<{ code: string; quota: { usage: number } }>(refused);
    expect(problem).toMatchObject({ code: 'quota_exceeded', quota: { name: quota, limit, requested: 1 } });
    // Each refusal counted after the three that passed committed: the lock orders them.
    expect(problem.quota.usage).toBe(limit);
  }
}

describe('parallel creates against the api_keys and webhooks quotas', () => {
  it('api_keys: 10 creates by two users of one customer with room for 3 → exactly 3 keys', async () => {
    const [one, two] = replicas;
    const customerId = (await one.customer()).id;
    // Each test user holds one key already: 2 used, a limit of 5 leaves room for 3.
    const users = [await one.user('operator', customerId), await one.user('admin', customerId)];
    const limit = 2 + ROOM;
    await one.container.db.customer.update({
      where: { id: customerId },
      data: { quotaOverrides: { api_keys: limit } },
    });
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        (i % 2 === 0 ? one : two).app.inject({
          method: 'POST',
          url: '/api/auth/api-keys',
          headers: { authorization: users[i % 2]!.auth },
          // A key mints only limited keys (docs/auth.md#deploy-tokens); they count all the same.
          payload: { name: `race ${i}`, actions: ['read'] },
        }),
      ),
    );
    expectRefusals(responses, 'api_keys', limit);
    for (const refused of responses.filter((response) => response.statusCode === 409))
      expect(json(refused)).toMatchObject({ quota: { customer_id: customerId } });
    const active = await one.container.db.apiKey.count({
      where: { revokedAt: null, user: { customerId } },
    });
    expect(active).toBe(limit);
    const usage = await one.app.inject({
      method: 'GET',
      url: `/api/customers/${customerId}/quota`,
      headers: { authorization: users[0]!.auth },
    });
    expect(json(usage)).toMatchObject({ limits: { api_keys: limit }, usage: { api_keys: limit } });
  });

  it('webhooks: 10 creates on 10 services with room for 3 → exactly 3 hooks', async () => {
    const [one, two] = replicas;
    const customerId = (await one.customer()).id;
    const operator = await one.user('operator', customerId);
    const services = [];
    for (let i = 0; i < 11; i++)
      services.push(
        await one.createService(operator.auth, {
          customer_id: customerId,
          deploy_method: 'git',
          git_url: 'git://127.0.0.1:40000/repo.git',
          git_branch: 'main',
        }),
      );
    const [withHook, ...rest] = services;
    const first = await one.app.inject({
      method: 'POST',
      url: `/api/services/${withHook!.id}/webhook`,
      headers: { authorization: operator.auth },
    });
    expect(first.statusCode).toBe(201);
    const limit = 1 + ROOM;
    await one.container.db.customer.update({
      where: { id: customerId },
      data: { quotaOverrides: { webhooks: limit } },
    });
    const responses = await Promise.all(
      rest.map((service, i) =>
        (i % 2 === 0 ? one : two).app.inject({
          method: 'POST',
          url: `/api/services/${service.id}/webhook`,
          headers: { authorization: operator.auth },
        }),
      ),
    );
    expectRefusals(responses, 'webhooks', limit);
    const hooks = await one.container.db.serviceWebhook.count({ where: { service: { customerId } } });
    expect(hooks).toBe(limit);
    // At the limit, a rotation of an existing hook adds nothing and still passes.
    const rotated = await two.app.inject({
      method: 'POST',
      url: `/api/services/${withHook!.id}/webhook`,
      headers: { authorization: operator.auth },
    });
    expect(rotated.statusCode).toBe(201);
    expect(json(rotated)).toMatchObject({ rotated: true });
    const usage = await one.app.inject({
      method: 'GET',
      url: `/api/customers/${customerId}/quota`,
      headers: { authorization: operator.auth },
    });
    expect(json(usage)).toMatchObject({ limits: { webhooks: limit }, usage: { webhooks: limit } });
  });
});
