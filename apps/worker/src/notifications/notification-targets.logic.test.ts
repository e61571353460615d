// Issue 27, class 5: notification targets have an allowlist of their own, and a tenant reads the
// status of an answer, not its body. Real worker app, queue, relay and outbox; real HTTP servers on
// loopback. The git allowlist opens every ephemeral loopback port, as the dev stack's does: an
// internal service there (seen: `INTERNAL ONLY: token=hunter2` in last_response) must stay out of
// reach of a subscription, and an allowlisted receiver's answer body must not reach the log.
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { freePort } from '@hostctl/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noopRouter } from '../adapters/router.js';
import { createFakeRuntime } from '../testing/fake-runtime.js';
import { waitFor } from '../testing/fixtures.js';
import { TEST_IMAGE } from '../testing/test-env.js';
import { useWorkerApp } from '../testing/worker-fixture.js';

const SECRET_ANSWER = 'INTERNAL ONLY: token=hunter2';

/** An HTTP server that counts requests and answers `statuses` in turn (then 200), always with the secret. */
function secretServer(statuses: number[] = []) {
  const state = { requests: 0 };
  const server: Server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      state.requests += 1;
      response.writeHead(statuses.shift() ?? 200, { 'content-type': 'text/plain' });
      response.end(SECRET_ANSWER);
    });
  });
  return { server, state };
}

const internalPort = await freePort();
const receiverPort = await freePort();
const internal = secretServer();
const receiver = secretServer([500]);

const fixture = useWorkerApp('notify-targets', {
  runtime: createFakeRuntime({ images: [TEST_IMAGE] }),
  app: { router: noopRouter, observe: false },
  env: {
    GIT_ALLOWED_HOSTS: '127.0.0.1:32768-60999',
    NOTIFICATION_ALLOWED_HOSTS: `127.0.0.1:${receiverPort}`,
    NOTIFY_MAX_ATTEMPTS: '3',
    NOTIFY_RETRY_BASE_MS: '200',
    NOTIFY_TIMEOUT_MS: '2000',
    NOTIFY_RELAY_INTERVAL_MS: '100',
  },
});
const { db } = fixture;

const listen = (server: Server, port: number) =>
  new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
beforeAll(async () => {
  await listen(internal.server, internalPort);
  await listen(receiver.server, receiverPort);
});
afterAll(async () => {
  for (const { server } of [internal, receiver]) await new Promise((resolve) => server.close(resolve));
});

/**
 * A due delivery of a fresh customer's subscription to `url`, written as the outbox writes it. The
 * row is inserted directly: a URL saved before the operator narrowed the allowlist is exactly what
 * the worker's own check exists for (the API refuses it at create, notifications.test.ts).
 */
async function dueDelivery(url: string) {
  const customer = await db.customer.create({ data: { name: `targets-${randomUUID().slice(0, 8)}` } });
  const subscription = await db.notificationSubscription.create({
    data: { customerId: customer.id, url, events: ['service.failed'], secret: 'whsec_targets' },
  });
  return db.notificationDelivery.create({
    data: {
      subscriptionId: subscription.id,
      event: 'service.failed',
      body: { event: 'service.failed' },
      nextAttemptAt: new Date(),
    },
  });
}

const settled = (id: string) =>
  waitFor(`delivery ${id} settled`, async () => {
    const row = await db.notificationDelivery.findUniqueOrThrow({ where: { id } });
    return row.status !== 'pending' && row;
  });

describe('notification targets', () => {
  it('never sends to a loopback port that only the git allowlist opens', async () => {
    const delivery = await dueDelivery(`http://127.0.0.1:${internalPort}/admin`);
    const row = await settled(delivery.id);
    expect(row).toMatchObject({ status: 'failed', attempts: 1, lastStatusCode: null, lastResponse: null });
    expect(row.lastError).toMatch(/target URL refused: .*NOTIFICATION_ALLOWED_HOSTS/);
    expect(internal.state.requests).toBe(0);
  });

  it("keeps the status of an allowlisted receiver's answers, never their body", async () => {
    const delivery = await dueDelivery(`http://127.0.0.1:${receiverPort}/hook`);
    const row = await settled(delivery.id);
    expect(receiver.state.requests).toBe(2);
    expect(row).toMatchObject({ status: 'delivered', attempts: 2, lastStatusCode: 200, lastResponse: null });
    const log = JSON.stringify(await db.notificationDelivery.findMany({ where: { id: delivery.id } }));
    expect(log).not.toContain('hunter2');
  });
});
