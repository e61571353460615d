// Outbound notifications end to end in the worker (docs/notifications.md): real PostgreSQL outbox,
// real BullMQ queue and relay, a real HTTP receiver on loopback that verifies the signature the
// way the docs tell receivers to. The deployments run on the fake runtime.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createNotificationsStore, createWorkerServiceStore, createWorkerTelemetryStore } from '@hostctl/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noopRouter } from '../adapters/router.js';
import { createFakeRuntime } from '../testing/fake-runtime.js';
import { createComposeService, waitFor, waitForDeployment } from '../testing/fixtures.js';
import { TEST_IMAGE } from '../testing/test-env.js';
import { useWorkerApp } from '../testing/worker-fixture.js';

const fixture = useWorkerApp('notify', {
  runtime: createFakeRuntime({ images: [TEST_IMAGE] }),
  app: { router: noopRouter, observe: false, readiness: { timeoutMs: 5000, stableMs: 100 } },
  env: {
    NOTIFICATION_ALLOWED_HOSTS: '127.0.0.1:32768-60999',
    // The stored answer is asserted below; tenants see it only when the operator opts in.
    NOTIFY_SHOW_RESPONSE_BODY: 'true',
    NOTIFY_MAX_ATTEMPTS: '3',
    NOTIFY_RETRY_BASE_MS: '200',
    NOTIFY_TIMEOUT_MS: '2000',
    NOTIFY_RELAY_INTERVAL_MS: '100',
  },
});
const { db, app } = fixture;

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/** A receiver that answers the queued statuses in turn (then 200) and records every request. */
function startReceiver() {
  const received: Received[] = [];
  const answers: number[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
      const status = answers.shift() ?? 200;
      if (status === 302) response.setHeader('location', 'http://127.0.0.1:1/elsewhere');
      response.writeHead(status, { 'content-type': 'text/plain' });
      response.end(`answer ${status}\u0007\u001b[31m${'x'.repeat(2000)}`);
    });
  });
  return { server, received, answers };
}

const receiver = startReceiver();
let receiverUrl = '';

beforeAll(async () => {
  await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.server.address() as AddressInfo).port}/hook`;
});
afterAll(async () => new Promise<void>((resolve) => receiver.server.close(() => resolve())));

/** The documented receiver check: HMAC-SHA256 over "<t>.<raw body>", constant-time compare. */
function verify(secret: string, received: Received): boolean {
  const header = String(received.headers['hostctl-signature'] ?? '');
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
  if (!match) return false;
  const expected = createHmac('sha256', secret).update(`${match[1]}.${received.body}`).digest();
  return timingSafeEqual(expected, Buffer.from(match[2]!, 'hex'));
}

const secretOf = (label: string) => `whsec_test_${label}`;

/** A service of a fresh customer subscribed to `events`, and its first deployment enqueued. */
async function subscribedService(
  events: string[],
  compose = `services:\n  web:\n    image: ${TEST_IMAGE}\n`,
) {
  const service = fixture.track(await createComposeService(db, { compose }));
  const subscription = await db.notificationSubscription.create({
    data: { customerId: service.customerId, url: receiverUrl, events, secret: secretOf(service.serviceId) },
  });
  return { ...service, subscriptionId: subscription.id };
}
const deliveriesOf = (subscriptionId: string) =>
  db.notificationDelivery.findMany({ where: { subscriptionId }, orderBy: { createdAt: 'asc' } });
const receivedFor = (deliveryId: string) =>
  receiver.received.filter((request) => request.headers['hostctl-delivery'] === deliveryId);
const settled = (deliveryId: string) =>
  waitFor(`delivery ${deliveryId} settled`, async () => {
    const row = await db.notificationDelivery.findUniqueOrThrow({ where: { id: deliveryId } });
    return row.status !== 'pending' && row;
  });

describe('notifications from the worker', () => {
  it('signs a deployment.succeeded notification the receiver can verify', async () => {
    const service = await subscribedService(['deployment.succeeded', 'deployment.failed']);
    await app.producer.enqueue('deploy', { deploymentId: service.deploymentId });
    expect(await waitForDeployment(db, service.deploymentId, 30_000)).toMatchObject({ status: 'succeeded' });
    const [delivery] = await deliveriesOf(service.subscriptionId);
    expect(await settled(delivery!.id)).toMatchObject({
      status: 'delivered',
      attempts: 1,
      lastStatusCode: 200,
    });
    const [request] = receivedFor(delivery!.id);
    expect(verify(secretOf(service.serviceId), request!)).toBe(true);
    expect(verify('whsec_wrong', request!)).toBe(false);
    expect(request!.headers).toMatchObject({
      'content-type': 'application/json',
      'hostctl-event': 'deployment.succeeded',
      'hostctl-delivery': delivery!.id,
    });
    const service_ = await db.service.findUniqueOrThrow({ where: { id: service.serviceId } });
    expect(JSON.parse(request!.body)).toEqual({
      id: delivery!.id,
      event: 'deployment.succeeded',
      created_at: expect.any(String),
      customer_id: service.customerId,
      service: { id: service.serviceId, name: service_.name },
      deployment: { id: service.deploymentId, status: 'succeeded' },
      message: expect.any(String),
    });
    // The stored answer is the first KiB at most, without control characters.
    const row = await db.notificationDelivery.findUniqueOrThrow({ where: { id: delivery!.id } });
    expect(row.lastResponse!.length).toBeLessThanOrEqual(1024);
    expect(row.lastResponse).toMatch(/^answer 200 {2}\[31mx+$/);
  });

  it('notifies a failed deployment with its error, and only the subscribed events', async () => {
    const service = await subscribedService(
      ['deployment.failed'],
      'services:\n  web:\n    image: local/missing:1\n',
    );
    await app.producer.enqueue('deploy', { deploymentId: service.deploymentId });
    expect(await waitForDeployment(db, service.deploymentId, 30_000)).toMatchObject({ status: 'failed' });
    const deliveries = await deliveriesOf(service.subscriptionId);
    expect(deliveries.map((row) => row.event)).toEqual(['deployment.failed']);
    await settled(deliveries[0]!.id);
    const body = JSON.parse(receivedFor(deliveries[0]!.id)[0]!.body) as { deployment: { error: string } };
    expect(body.deployment).toMatchObject({ id: service.deploymentId, status: 'failed' });
    expect(body.deployment.error).toMatch(/local\/missing/);
  });

  it('retries a 500 with backoff under the same delivery id, then records the success', async () => {
    const service = await subscribedService(['service.failed']);
    receiver.answers.push(500, 503);
    await createWorkerServiceStore(db).setStatus(service.serviceId, 'failed', {
      type: 'status',
      status: 'failed',
      message: 'Service failed: web exited with code 1',
    });
    const [delivery] = await deliveriesOf(service.subscriptionId);
    expect(await settled(delivery!.id)).toMatchObject({
      status: 'delivered',
      attempts: 3,
      lastStatusCode: 200,
    });
    const attempts = receivedFor(delivery!.id);
    expect(attempts).toHaveLength(3);
    expect(attempts.every((request) => verify(secretOf(service.serviceId), request))).toBe(true);
    expect(new Set(attempts.map((request) => request.body)).size).toBe(1);
  });

  it('fails after the last attempt, does not follow redirects, and redelivers with the same id', async () => {
    const service = await subscribedService(['service.deleted']);
    receiver.answers.push(500, 302, 500);
    await db.service.update({ where: { id: service.serviceId }, data: { deletedAt: new Date() } });
    await createWorkerServiceStore(db).markPurged(service.serviceId);
    const [delivery] = await deliveriesOf(service.subscriptionId);
    const failed = await settled(delivery!.id);
    expect(failed).toMatchObject({ status: 'failed', attempts: 3, lastStatusCode: 500, nextAttemptAt: null });
    expect(receivedFor(delivery!.id)).toHaveLength(3);
    const redelivered = await createNotificationsStore(db).redeliver({ kind: 'all' }, delivery!.id, {
      intervalMs: 0,
      perMinute: 100,
    });
    expect(redelivered).toMatchObject({ kind: 'redelivered', row: { status: 'pending', attempts: 0 } });
    expect(await settled(delivery!.id)).toMatchObject({ status: 'delivered', attempts: 1 });
    const all = receivedFor(delivery!.id);
    expect(all).toHaveLength(4);
    expect(JSON.parse(all[3]!.body)).toMatchObject({ id: delivery!.id, event: 'service.deleted' });
  });

  it('checks the target again at delivery time and never sends to a refused address', async () => {
    const service = await subscribedService(['service.failed']);
    await db.notificationSubscription.update({
      where: { id: service.subscriptionId },
      data: { url: 'http://169.254.169.254/latest/meta-data/' },
    });
    const before = receiver.received.length;
    await createWorkerServiceStore(db).setStatus(service.serviceId, 'failed');
    const [delivery] = await deliveriesOf(service.subscriptionId);
    const refused = await settled(delivery!.id);
    expect(refused).toMatchObject({ status: 'failed', attempts: 1, lastStatusCode: null });
    expect(refused.lastError).toMatch(/target URL refused/);
    expect(receiver.received.length).toBe(before);
  });

  it('notifies a health change in the transaction that records it', async () => {
    const service = await subscribedService(['service.unhealthy']);
    await db.service.update({ where: { id: service.serviceId }, data: { status: 'running' } });
    const recorded = await createWorkerTelemetryStore(db).recordHealth(
      service.serviceId,
      { status: 'unhealthy', consecutiveFailures: 2, checkedAt: new Date() },
      { type: 'health', status: 'unhealthy', message: 'Service is unhealthy: web refuses connections' },
      'service.unhealthy',
    );
    expect(recorded).toBe(true);
    const [delivery] = await deliveriesOf(service.subscriptionId);
    await settled(delivery!.id);
    expect(JSON.parse(receivedFor(delivery!.id)[0]!.body)).toMatchObject({
      event: 'service.unhealthy',
      message: 'Service is unhealthy: web refuses connections',
    });
  });

  it('writes no delivery for a disabled subscription or an event nobody subscribed to', async () => {
    const service = await subscribedService(['service.unhealthy']);
    await createWorkerServiceStore(db).setStatus(service.serviceId, 'failed');
    await db.notificationSubscription.update({
      where: { id: service.subscriptionId },
      data: { enabled: false },
    });
    await createWorkerServiceStore(db).setStatus(service.serviceId, 'running');
    await createWorkerServiceStore(db).setStatus(service.serviceId, 'failed');
    expect(await deliveriesOf(service.subscriptionId)).toEqual([]);
  });
});
