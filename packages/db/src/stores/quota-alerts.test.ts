import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../client.js';
import { migrate } from '../migrator.js';
import { createFreshDatabase, MIGRATIONS_DIR, type FreshDatabase } from '../testing/fresh-database.js';
import { keyringFromEnvironment } from '../vault/keyring-settings.js';
import { createQuotaAlertsStore, type QuotaAlertsStore } from './quota-alerts.store.js';

// The over-quota notification (docs/quotas.md#over-quota-notification), from what a customer and
// an operator expect: usage found above a quota sends one quota.exceeded per quota per streak,
// not one per sweep nor one per worker; a streak ends when usage is back within the limit, and a
// new streak notifies again. A database of its own: a sweep goes over every customer.

let fresh: FreshDatabase;
let replicas: Database[];
let stores: QuotaAlertsStore[];

beforeAll(async () => {
  fresh = await createFreshDatabase('hostctl_quota_alerts');
  await migrate(fresh.url, MIGRATIONS_DIR);
  const keys = keyringFromEnvironment(process.env);
  // Two pools, as two worker replicas would have.
  replicas = [
    createDatabase({ url: fresh.url, max: 4, keys }),
    createDatabase({ url: fresh.url, max: 4, keys }),
  ];
  stores = replicas.map((replica) => createQuotaAlertsStore(replica.db));
});
afterAll(async () => {
  await Promise.all(replicas?.map((replica) => replica.db.$disconnect()) ?? []);
  await fresh?.drop();
});

const db = () => replicas[0]!.db;

/** A customer with `subscriptions` subscriptions, the first wanting quota.exceeded, the others not. */
async function customerWith(name: string, subscriptions: number) {
  const customer = await db().customer.create({ data: { name } });
  for (let i = 0; i < subscriptions; i++)
    await db().notificationSubscription.create({
      data: {
        customerId: customer.id,
        url: `https://hooks.example.test/${name}/${i}`,
        events: i === 0 ? ['quota.exceeded', 'deployment.failed'] : ['deployment.failed'],
        secret: 's'.repeat(32),
      },
    });
  return customer.id;
}

const setOverrides = (customerId: string, overrides: Record<string, number | null>) =>
  db().customer.update({ where: { id: customerId }, data: { quotaOverrides: overrides } });

const notifications = (customerId: string) =>
  db().notificationDelivery.findMany({
    where: { event: 'quota.exceeded', subscription: { customerId } },
    orderBy: { createdAt: 'asc' },
  });

describe('quota.exceeded', () => {
  it('one notification per quota per streak, however many sweeps and workers see it', async () => {
    const acme = await customerWith('acme', 3);
    const calm = await customerWith('calm', 3);
    await setOverrides(acme, { notification_subscriptions: 1 }); // an admin lowers it below usage
    await setOverrides(calm, { notification_subscriptions: 5 });

    // Two workers sweeping at once, three times over.
    for (let round = 0; round < 3; round++) await Promise.all(stores.map((store) => store.sweep()));

    const sent = await notifications(acme);
    expect(sent).toHaveLength(1); // one subscription wants it, one streak
    expect(sent[0]!.body).toMatchObject({
      event: 'quota.exceeded',
      customer_id: acme,
      quota: { name: 'notification_subscriptions', limit: 1, usage: 3 },
    });
    expect((sent[0]!.body as { message: string }).message).toMatch(
      /^quota notification_subscriptions exceeded: the customer uses 3 of 1 notification subscriptions/,
    );
    expect(await notifications(calm)).toHaveLength(0);
    expect((await stores[0]!.alertsOf(acme)).map((alert) => alert.quota)).toEqual([
      'notification_subscriptions',
    ]);
  });

  it('a streak ends when usage is back within the limit; the next one notifies again', async () => {
    const beta = await customerWith('beta', 2);
    await setOverrides(beta, { notification_subscriptions: 1 });
    await stores[0]!.sweep();
    expect(await notifications(beta)).toHaveLength(1);

    await setOverrides(beta, { notification_subscriptions: 2 }); // at the limit: within it
    const back = await stores[1]!.sweepCustomer(beta);
    expect(back).toEqual({ raised: [], cleared: 1 });
    expect(await stores[0]!.alertsOf(beta)).toEqual([]);
    await stores[0]!.sweep();
    expect(await notifications(beta)).toHaveLength(1);

    await setOverrides(beta, { notification_subscriptions: 0 }); // lowered again: a new streak
    await Promise.all([stores[0]!.sweepCustomer(beta), stores[1]!.sweepCustomer(beta)]);
    const sent = await notifications(beta);
    expect(sent).toHaveLength(2);
    expect(sent[1]!.body).toMatchObject({
      quota: { name: 'notification_subscriptions', limit: 0, usage: 2 },
    });
  });

  it('each quota over its limit is its own streak; an unlimited quota is never over', async () => {
    const gamma = await customerWith('gamma', 1);
    const service = { customerId: gamma, status: 'running' as const, deployMethod: 'compose' as const };
    for (const name of ['web', 'api'])
      await db().service.create({
        data: { ...service, name: `gamma-${name}`, url: 'http://x', containers: 2, claimedMemoryMb: 512 },
      });
    await setOverrides(gamma, { services: 1, memory_mb: 1000, containers: null });
    const round = await stores[0]!.sweepCustomer(gamma);
    expect(round.raised.map((alert) => [alert.quota, alert.limit, alert.usage])).toEqual([
      ['services', 1, 2],
      ['memory_mb', 1000, 1024],
    ]);
    expect(
      (await notifications(gamma)).map((row) => (row.body as { quota: { name: string } }).quota.name),
    ).toEqual(expect.arrayContaining(['services', 'memory_mb']));

    await setOverrides(gamma, { services: 1, memory_mb: null }); // memory made unlimited: that streak ends
    expect(await stores[0]!.sweepCustomer(gamma)).toEqual({ raised: [], cleared: 1 });
    expect((await stores[0]!.alertsOf(gamma)).map((alert) => alert.quota)).toEqual(['services']);
    expect(await notifications(gamma)).toHaveLength(2);
  });

  it('a sweep reads every customer but takes the lock only of those over a quota or in a streak', async () => {
    const calm = await Promise.all(Array.from({ length: 20 }, (_, i) => customerWith(`quiet-${i}`, 1)));
    const delta = await customerWith('delta', 2);
    await setOverrides(delta, { notification_subscriptions: 1 });

    const first = await stores[0]!.sweep();
    expect(first.raised.map((alert) => alert.customerId)).toContain(delta);
    // The 20 quiet customers were read, and none of them examined under its lock.
    expect(first.customers - first.examined).toBeGreaterThanOrEqual(calm.length);

    // A streak ends in a plain sweep too: a customer in a streak is examined though no longer over.
    await setOverrides(delta, { notification_subscriptions: 2 });
    const second = await stores[0]!.sweep();
    expect(second.cleared).toBeGreaterThanOrEqual(1);
    expect(await stores[0]!.alertsOf(delta)).toEqual([]);

    // A quiet customer lowered below its usage is found by the next sweep.
    await setOverrides(calm[7]!, { notification_subscriptions: 0 });
    const third = await stores[1]!.sweep();
    expect(third.raised).toContainEqual({
      customerId: calm[7],
      quota: 'notification_subscriptions',
      limit: 0,
      usage: 1,
    });
  });
});
