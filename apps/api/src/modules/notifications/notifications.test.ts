import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Role } from '@hostctl/domain';
import { buildFixtures, type Caller, type Fixtures } from '../../authz/authz-fixtures.js';
import { createHarness, json, type Harness } from '../../test-support/harness.js';

/**
 * Notification subscriptions through the API (docs/notifications.md): the secret is shown once,
 * target URLs pass the host policy with their own allowlist (NOTIFICATION_ALLOWED_HOSTS, never the
 * git one), every read and write is scoped to the caller's customer,
 * and the delivery log and redeliver act on the outbox rows. The role × scope matrix of every
 * route is in authz/notification-routes.table.ts; delivery itself is the worker's (notifications/).
 */
let h: Harness;
let f: Fixtures;
/** The operator's own customer (PLATFORM_NOTIFICATIONS_CUSTOMER_ID): the only receiver of platform events. */
const platformCustomerId = randomUUID();

const caller = (role: Role, scope: Caller['scope']) =>
  f.callers.find((c) => c.role === role && c.scope === scope)!;
const as = (
  who: Caller | string,
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
  url: string,
  payload?: object,
) =>
  h.app.inject({
    method,
    url,
    headers: { authorization: typeof who === 'string' ? who : who.auth },
    ...(payload ? { payload } : {}),
  });

interface Subscription {
  id: string;
  customer_id: string;
  url: string;
  events: string[];
  enabled: boolean;
  description: string;
  secret?: string;
}
interface Delivery {
  id: string;
  status: string;
  attempts: number;
  next_attempt_at: string | null;
  delivered_at: string | null;
}

const BASE = '/api/notification-subscriptions';
const valid = {
  url: 'https://hooks.example.com/hostctl?token=abc',
  events: ['deployment.failed', 'service.failed'],
};

async function subscribe(who: Caller | string, body: object = valid): Promise<Subscription> {
  const response = await as(who, 'POST', BASE, body);
  expect(response.statusCode, response.body).toBe(201);
  return json<Subscription>(response);
}

beforeAll(async () => {
  // The dev stack's git allowlist opens every ephemeral loopback port; receivers get one port only.
  h = await createHarness({
    LIFECYCLE_WAIT_MS: '100',
    GIT_ALLOWED_HOSTS: '127.0.0.1:32768-60999,localhost:32768-60999',
    NOTIFICATION_ALLOWED_HOSTS: '127.0.0.1:45678',
    PLATFORM_NOTIFICATIONS_CUSTOMER_ID: platformCustomerId,
  });
  f = await buildFixtures(h);
  await h.container.db.customer.create({
    data: { id: platformCustomerId, name: `ops-${platformCustomerId}` },
  });
});
afterAll(async () => {
  await h?.container.db.customer.deleteMany({ where: { id: platformCustomerId } });
  await h?.close();
});

describe('creating a subscription', () => {
  it('answers the signing secret once, and never again', async () => {
    const created = await subscribe(caller('operator', 'own'), { ...valid, description: 'CI channel' });
    expect(created).toMatchObject({
      customer_id: f.customerA,
      url: valid.url,
      events: valid.events,
      enabled: true,
      description: 'CI channel',
    });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    const reads = [
      await as(caller('viewer', 'own'), 'GET', `${BASE}/${created.id}`),
      await as(caller('viewer', 'own'), 'GET', BASE),
      await as(caller('operator', 'own'), 'PATCH', `${BASE}/${created.id}`, { description: 'renamed' }),
    ];
    for (const response of reads) {
      expect(response.statusCode).toBe(200);
      expect(response.body).not.toContain(created.secret);
      expect(response.body).not.toContain('"secret"');
    }
  });

  it('rotating answers a new secret once', async () => {
    const created = await subscribe(caller('admin', 'own'));
    const rotated = await as(caller('admin', 'own'), 'POST', `${BASE}/${created.id}/rotate-secret`);
    expect(rotated.statusCode).toBe(200);
    const secret = json<Subscription>(rotated).secret!;
    expect(secret).toMatch(/^whsec_/);
    expect(secret).not.toBe(created.secret);
    const stored = await h.container.db.notificationSubscription.findUniqueOrThrow({
      where: { id: created.id },
    });
    expect(stored.secret).toBe(secret);
  });

  it('needs customer_id from an unscoped caller and implies it for a scoped one', async () => {
    const missing = await as(caller('admin', 'unscoped'), 'POST', BASE, valid);
    expect(missing.statusCode).toBe(400);
    expect(json(missing).detail).toMatch(/customer_id/);
    const implied = await subscribe(caller('operator', 'own'));
    expect(implied.customer_id).toBe(f.customerA);
    const elsewhere = await as(caller('operator', 'other'), 'POST', BASE, {
      ...valid,
      customer_id: f.customerA,
    });
    expect(elsewhere.statusCode).toBe(403);
  });

  it.each([
    ['loopback, not allowlisted', 'https://127.0.0.1/hook', /loopback/],
    [
      'loopback on a port outside the allowlist',
      'http://127.0.0.1:8080/hook',
      /only allowed for hosts in NOTIFICATION_ALLOWED_HOSTS/,
    ],
    // Issue 27, class 5: an internal service on a port the git allowlist opens is no receiver.
    [
      'a loopback port only the git allowlist opens',
      'http://127.0.0.1:45000/internal',
      /only allowed for hosts in NOTIFICATION_ALLOWED_HOSTS/,
    ],
    ['https to a host only the git allowlist opens', 'https://localhost:45000/internal', /localhost/],
    ['cloud metadata', 'https://169.254.169.254/latest/meta-data/', /link-local/],
    ['a private address', 'https://10.0.0.7/hook', /private/],
    ['localhost', 'https://localhost/hook', /localhost/],
    ['the database (control plane)', 'http://127.0.0.1:5432/', /control-plane/],
    ['Redis (control plane)', 'http://127.0.0.1:6379/', /control-plane/],
    ['an IPv4 shorthand', 'https://0x7f.1/hook', /canonical/],
    ['plain http to a public host', 'http://hooks.example.com/hook', /http:\/\//],
    ['credentials in the URL', 'https://user:pw@hooks.example.com/hook', /credentials/],
    ['another scheme', 'file:///etc/passwd', /scheme/],
  ])('refuses %s with a 400 naming the URL', async (_label, url, reason) => {
    const response = await as(caller('admin', 'own'), 'POST', BASE, { ...valid, url });
    expect(response.statusCode).toBe(400);
    const problem = json<{ detail: string; errors: { path: string; message: string }[] }>(response);
    expect(problem.errors[0]?.path).toBe('/body/url');
    expect(problem.errors[0]?.message).toMatch(reason);
  });

  it('accepts an allowlisted loopback receiver (NOTIFICATION_ALLOWED_HOSTS) and checks a changed URL again', async () => {
    const created = await subscribe(caller('admin', 'own'), {
      ...valid,
      url: 'http://127.0.0.1:45678/receiver',
    });
    const moved = await as(caller('admin', 'own'), 'PATCH', `${BASE}/${created.id}`, {
      url: 'https://169.254.169.254/',
    });
    expect(moved.statusCode).toBe(400);
  });

  it.each([
    ['no events', { ...valid, events: [] }],
    ['an unknown event', { ...valid, events: ['deployment.exploded'] }],
    ['a repeated event', { ...valid, events: ['service.failed', 'service.failed'] }],
    ['an unknown field', { ...valid, secret: 'mine' }],
    ['a long description', { ...valid, description: 'x'.repeat(201) }],
  ])('refuses %s', async (_label, body) => {
    expect((await as(caller('admin', 'own'), 'POST', BASE, body)).statusCode).toBe(400);
  });
});

describe('platform events (certificate alerts)', () => {
  const alerts = { ...valid, events: ['certificate.renewal_failed', 'certificate.expiring'] };

  it("go to the operator's customer: an admin subscribes it", async () => {
    const created = await subscribe(caller('admin', 'unscoped'), {
      ...alerts,
      customer_id: platformCustomerId,
    });
    expect(created.events).toEqual(alerts.events);
  });

  it("are refused to a tenant's subscription, at create and at update, naming the events", async () => {
    const refused = await as(caller('operator', 'own'), 'POST', BASE, alerts);
    expect(refused.statusCode).toBe(400);
    const problem = json<{ errors: { path: string; message: string }[] }>(refused);
    expect(problem.errors[0]).toMatchObject({
      path: '/body/events',
      message: expect.stringMatching(
        /certificate\.renewal_failed, certificate\.expiring go only to the operator/,
      ),
    });
    const own = await subscribe(caller('operator', 'own'));
    const widened = await as(caller('admin', 'unscoped'), 'PATCH', `${BASE}/${own.id}`, {
      events: ['deployment.failed', 'certificate.expiring'],
    });
    expect(widened.statusCode).toBe(400);
    expect(
      json<Subscription>(await as(caller('operator', 'own'), 'GET', `${BASE}/${own.id}`)).events,
    ).toEqual(valid.events);
  });
});

describe('scope', () => {
  let ofA: Subscription;
  beforeAll(async () => {
    ofA = await subscribe(caller('admin', 'own'));
  });

  it("lists the caller's customer's subscriptions only", async () => {
    const listed = async (who: Caller) =>
      json<{ data: Subscription[] }>(await as(who, 'GET', `${BASE}?per_page=100`)).data.map((s) => s.id);
    expect(await listed(caller('viewer', 'own'))).toContain(ofA.id);
    expect(await listed(caller('operator', 'other'))).not.toContain(ofA.id);
    expect(await listed(caller('viewer', 'unscoped'))).toEqual([]);
    expect(await listed(caller('operator', 'unscoped'))).toContain(ofA.id);
  });

  it("answers 404 for another customer's subscription, on every route", async () => {
    const other = caller('admin', 'other');
    for (const [method, url, body] of [
      ['GET', `${BASE}/${ofA.id}`],
      ['PATCH', `${BASE}/${ofA.id}`, { enabled: false }],
      ['DELETE', `${BASE}/${ofA.id}`],
      ['POST', `${BASE}/${ofA.id}/rotate-secret`],
      ['GET', `${BASE}/${ofA.id}/deliveries`],
    ] as const) {
      expect((await as(other, method, url, body)).statusCode).toBe(404);
    }
    expect((await as(caller('admin', 'own'), 'GET', `${BASE}/${ofA.id}`)).statusCode).toBe(200);
  });

  it('a viewer reads but does not write', async () => {
    const viewer = caller('viewer', 'own');
    expect((await as(viewer, 'GET', `${BASE}/${ofA.id}`)).statusCode).toBe(200);
    expect((await as(viewer, 'PATCH', `${BASE}/${ofA.id}`, { enabled: false })).statusCode).toBe(403);
    expect((await as(viewer, 'POST', BASE, valid)).statusCode).toBe(403);
  });
});

describe('the delivery log and redeliver', () => {
  it('lists the outbox rows and makes a finished delivery due again with the same id', async () => {
    const subscription = await subscribe(caller('operator', 'own'));
    const failed = await h.container.db.notificationDelivery.create({
      data: {
        subscriptionId: subscription.id,
        event: 'deployment.failed',
        body: { id: 'x' },
        status: 'failed',
        attempts: 8,
        lastStatusCode: 500,
        lastError: 'the receiver answered 500',
        nextAttemptAt: null,
      },
    });
    const log = await as(caller('viewer', 'own'), 'GET', `${BASE}/${subscription.id}/deliveries`);
    expect(log.statusCode).toBe(200);
    expect(json<{ data: unknown[]; total: number }>(log)).toMatchObject({
      total: 1,
      data: [
        {
          id: failed.id,
          status: 'failed',
          attempts: 8,
          last_status_code: 500,
          last_error: 'the receiver answered 500',
          next_attempt_at: null,
        },
      ],
    });
    const redelivered = await as(
      caller('operator', 'own'),
      'POST',
      `/api/notification-deliveries/${failed.id}/redeliver`,
    );
    expect(redelivered.statusCode).toBe(202);
    const again = json<Delivery>(redelivered);
    expect(again).toMatchObject({ id: failed.id, status: 'pending', attempts: 0, delivered_at: null });
    expect(Date.parse(again.next_attempt_at!)).toBeLessThanOrEqual(Date.now());
    // The attempt is queued at once (the worker's relay would enqueue it too).
    const job = await h.container.producer.queue('notifications').getJob(`notify.${failed.id}.0`);
    expect(job?.data).toEqual({ deliveryId: failed.id, attempts: 0 });
  });

  it("does not redeliver another customer's delivery", async () => {
    const subscription = await subscribe(caller('operator', 'own'));
    const row = await h.container.db.notificationDelivery.create({
      data: {
        subscriptionId: subscription.id,
        event: 'service.failed',
        body: {},
        status: 'delivered',
        nextAttemptAt: null,
      },
    });
    const response = await as(
      caller('operator', 'other'),
      'POST',
      `/api/notification-deliveries/${row.id}/redeliver`,
    );
    expect(response.statusCode).toBe(404);
    const stored = await h.container.db.notificationDelivery.findUniqueOrThrow({ where: { id: row.id } });
    expect(stored.status).toBe('delivered');
  });

  it('deleting a subscription deletes its log', async () => {
    const subscription = await subscribe(caller('operator', 'own'));
    await h.container.db.notificationDelivery.create({
      data: { subscriptionId: subscription.id, event: 'service.failed', body: {}, nextAttemptAt: new Date() },
    });
    expect((await as(caller('operator', 'own'), 'DELETE', `${BASE}/${subscription.id}`)).statusCode).toBe(
      204,
    );
    expect(
      await h.container.db.notificationDelivery.count({ where: { subscriptionId: subscription.id } }),
    ).toBe(0);
  });
});
