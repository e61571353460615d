import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  COMPOSE_BUSYBOX,
  createHarness,
  json,
  uniqueName,
  type Harness,
} from '../../test-support/harness.js';

/**
 * Issue 31, done-when: 10 parallel creates with room for 3 → exactly 3 succeed. Each create counts
 * and inserts under the customer's quota lock (packages/db/src/stores/quota-ledger.ts), so no two
 * requests count against the same old total. Raced over two API replicas sharing the database,
 * so the lock, not anything in one process, is what decides.
 */
let replicas: Harness[];

beforeAll(async () => {
  replicas = [await createHarness(), await createHarness()];
});
afterAll(async () => Promise.all(replicas.map((h) => h.close())));

describe('parallel creates against a quota', () => {
  it.each([
    ['services', { services: 5 }, 2],
    ['containers', { containers: 4 }, 1],
    ['memory_mb', { memory_mb: 2048 }, 2],
  ] as const)('%s: 10 creates with room for 3 → exactly 3 created', async (quota, overrides, existing) => {
    const [one, two] = replicas as [Harness, Harness];
    const customerId = (await one.customer()).id;
    await one.container.db.customer.update({
      where: { id: customerId },
      data: { quotaOverrides: overrides },
    });
    const operator = await one.user('operator', customerId);
    // Fill the quota up to "room for 3": services and containers count 1 per create, memory 512 MiB.
    const filler = quota === 'memory_mb' ? 1 : existing;
    for (let i = 0; i < filler; i++) await one.createService(operator.auth, { customer_id: customerId });

    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        (i % 2 === 0 ? one : two).app.inject({
          method: 'POST',
          url: '/api/services',
          headers: { authorization: operator.auth },
          payload: {
            name: uniqueName('race'),
            customer_id: customerId,
            deploy_method: 'compose',
            compose: COMPOSE_BUSYBOX,
          },
        }),
      ),
    );
    const statuses = responses.map((response) => response.statusCode);
    expect(statuses.filter((status) => status === 201)).toHaveLength(3);
    expect(statuses.filter((status) => status === 409)).toHaveLength(7);
    for (const refused of responses.filter((response) => response.statusCode === 409))
      expect(json(refused)).toMatchObject({ code: 'quota_exceeded', quota: { name: quota } });
    const live = await one.container.db.service.count({ where: { customerId, deletedAt: null } });
    expect(live).toBe(filler + 3);
  });
});
