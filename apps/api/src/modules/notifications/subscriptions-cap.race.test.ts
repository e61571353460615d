import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, json, type Harness } from '../../test-support/harness.js';

/**
 * The default plan's notification_subscriptions quota (25) under a race (issue 27, class 8;
 * docs/quotas.md): N creates sent together for one customer end with exactly 25 created and the
 * rest refused with the documented 409 quota_exceeded problem. The count and the insert used to be two statements, so requests
 * arriving together all passed the count (seen: 40 → 26 created, 60 → 27).
 */
let h: Harness;

beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => h?.close());

const CAP = 25;

async function raceCreates(parallel: number) {
  const customer = await h.customer();
  const admin = await h.user('admin', customer.id);
  const responses = await Promise.all(
    Array.from({ length: parallel }, (_, i) =>
      h.app.inject({
        method: 'POST',
        url: '/api/notification-subscriptions',
        headers: { authorization: admin.auth },
        payload: { url: `https://hooks.example.com/race/${i}`, events: ['service.failed'] },
      }),
    ),
  );
  const stored = await h.container.db.notificationSubscription.count({ where: { customerId: customer.id } });
  return { responses, stored };
}

describe('notification subscriptions per customer, raced', () => {
  it.each([40, 60])('%i parallel creates: exactly 25 created, every other one a 409 problem', async (n) => {
    const { responses, stored } = await raceCreates(n);
    const statuses = responses.map((response) => response.statusCode);
    expect(statuses.filter((status) => status === 201)).toHaveLength(CAP);
    expect(statuses.filter((status) => status === 409)).toHaveLength(n - CAP);
    expect(stored).toBe(CAP);
    for (const refused of responses.filter((response) => response.statusCode === 409)) {
      expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(json(refused)).toMatchObject({
        code: 'quota_exceeded',
        quota: { name: 'notification_subscriptions', limit: 25, usage: 25, requested: 1 },
      });
      expect(json<{ detail: string }>(refused).detail).toMatch(/notification_subscriptions exceeded/);
    }
  });
});
