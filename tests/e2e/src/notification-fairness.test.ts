import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, keyringFromEnvironment, type Db } from '@hostctl/db';
import type { ApiResponse } from '@hostctl/testing';
import { eventually } from './client.js';
import { E2E_DATABASE_URL } from './env.js';
import { startHeldReceiver, type HeldReceiver } from './held-receiver.js';
import { startNotificationReceiver, type NotificationReceiver } from './notification-receiver.js';
import { operatorApi } from './release-fixtures.js';
import { startStack, type Stack } from './stack.js';

/**
 * One tenant must not delay every tenant's notifications (issue 27, class 4;
 * docs/notifications.md#fairness). Real api and worker processes, real loopback receivers.
 * Seen before: three redelivers during one attempt gave four attempts of one delivery holding all
 * four sender slots, 88 redeliver calls in a row were all 202, and another customer's notification
 * waited for them. Customer A's receiver holds every attempt open until the test releases it; the
 * assertions are about order and overlap (B's notification arrives while A's attempt is still
 * open, and before the sender gave up on any of A's), never about durations.
 */
let stack: Stack;
let db: Db;
let slow: HeldReceiver;
let fast: NotificationReceiver;
let tenantA: Awaited<ReturnType<typeof operatorApi>>;
let tenantB: Awaited<ReturnType<typeof operatorApi>>;
let subscriptionA: string;
let subscriptionB: string;

beforeAll(async () => {
  slow = await startHeldReceiver();
  fast = await startNotificationReceiver();
  stack = await startStack({
    extraEnv: {
      NOTIFICATION_ALLOWED_HOSTS: '127.0.0.1:32768-60999',
      WORKER_CONCURRENCY: '4',
      // Longer than anything below waits for: on the old sender, B got a slot only when A's timed out.
      NOTIFY_TIMEOUT_MS: '30000',
      NOTIFY_RELAY_INTERVAL_MS: '200',
      NOTIFY_REDELIVER_PER_MINUTE: '3',
    },
  });
  db = createDatabase({ url: E2E_DATABASE_URL, keys: keyringFromEnvironment(process.env) }).db;
  tenantA = await operatorApi(stack, 'notify-a');
  tenantB = await operatorApi(stack, 'notify-b');
  const subscribe = async (tenant: typeof tenantA, url: string) => {
    const created = await tenant.api.post<{ id: string; secret: string }>('/api/notification-subscriptions', {
      url,
      events: ['service.failed'],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body;
  };
  subscriptionA = (await subscribe(tenantA, slow.url)).id;
  const ofB = await subscribe(tenantB, fast.url);
  subscriptionB = ofB.id;
  fast.secret = ofB.secret;
}, 300_000);

afterAll(async () => {
  slow?.release();
  await stack?.stop();
  await db?.$disconnect();
  await slow?.close();
  await fast?.close();
});

/** A due delivery as the outbox writes it in the transaction of a state change. */
async function outboxRow(subscriptionId: string, customerId: string): Promise<string> {
  const id = randomUUID();
  const body = { id, event: 'service.failed', created_at: new Date().toISOString(), customer_id: customerId };
  await db.notificationDelivery.create({
    data: { id, subscriptionId, event: 'service.failed', body, nextAttemptAt: new Date() },
  });
  return id;
}

const redeliver = (tenant: typeof tenantA, id: string) =>
  tenant.api.post<{ code: string; detail: string }>(`/api/notification-deliveries/${id}/redeliver`);

function expectProblem(
  response: ApiResponse<{ code: string; detail: string }>,
  status: number,
  code: string,
) {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(response.body.code).toBe(code);
}

describe('a slow receiver costs its own customer only', () => {
  const deliveriesOfA: string[] = [];

  it("B's notification arrives while A's slow attempt is still open; A never holds two attempts", async () => {
    for (let i = 0; i < 4; i++) deliveriesOfA.push(await outboxRow(subscriptionA, tenantA.customerId));
    await eventually(
      async () => slow.open,
      (open) => open >= 1,
    );
    const [inFlight] = slow.openDeliveries();
    expect(deliveriesOfA).toContain(inFlight);

    // Redelivering the delivery whose attempt is open would start a second attempt beside it.
    for (let i = 0; i < 3; i++) expectProblem(await redeliver(tenantA, inFlight!), 409, 'conflict');

    const ofB = await outboxRow(subscriptionB, tenantB.customerId);
    const arrived = await fast.waitFor((n) => n.deliveryId === ofB, 90_000);
    // Order, not time: A's first attempt is still held, and the sender has given up on none of A's.
    expect(slow.openDeliveries()).toContain(inFlight);
    expect(slow.cutBySender).toBe(0);
    expect(arrived.verified).toBe(true);
    expect(slow.maxOpen).toBe(1);
    expect(slow.maxOpenPerDelivery).toBe(1);
  });

  it("A's deliveries all arrive once released, one attempt each", async () => {
    slow.release();
    await eventually(
      () => db.notificationDelivery.findMany({ where: { id: { in: deliveriesOfA } } }),
      (rows) => rows.length === 4 && rows.every((row) => row.status === 'delivered'),
      90_000,
    );
    expect(deliveriesOfA.map((id) => slow.attempts.get(id))).toEqual([1, 1, 1, 1]);
    expect(slow.maxOpen).toBe(1);
  });

  it('redeliver is spaced per delivery and bounded per customer', async () => {
    const [first, second, third, fourth] = deliveriesOfA as [string, string, string, string];
    expect((await redeliver(tenantA, first)).status).toBe(202);
    const again = await redeliver(tenantA, first);
    expectProblem(again, 429, 'rate_limited');
    expect(Number(again.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await redeliver(tenantA, second)).status).toBe(202);
    expect((await redeliver(tenantA, third)).status).toBe(202);
    const beyond = await redeliver(tenantA, fourth);
    expectProblem(beyond, 429, 'rate_limited');
    expect(beyond.body.detail).toMatch(/3 redeliveries per minute/);
    // Another customer's budget is its own.
    const ofB = (await db.notificationDelivery.findFirstOrThrow({ where: { subscriptionId: subscriptionB } }))
      .id;
    await eventually(
      () => db.notificationDelivery.findUniqueOrThrow({ where: { id: ofB } }),
      (row) => row.status === 'delivered',
    );
    expect((await redeliver(tenantB, ofB)).status).toBe(202);
  });
});
