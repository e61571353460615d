import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '@hostctl/testing';
import type { FaultClient } from './fault-client.js';
import type { PhaseContext } from './fault-phases.js';
import { waitFinal } from './request-ledger.js';

/**
 * Notifications survive a worker SIGKILL and a Redis restart mid-delivery (issue 15,
 * docs/notifications.md#durability). The receiver first accepts the request and never answers (the
 * worker is in the middle of the attempt), then every worker is SIGKILLed and the suite's Redis
 * restarts empty while they are down, then the receiver is down (connection refused) when the
 * workers come back, and only then answers. Every delivery must arrive, at least once, always under
 * the same Hostctl-Delivery id, with a signature that verifies and the same body each time.
 */
interface Received {
  delivery: string;
  signature: string;
  body: string;
}

function startReceiver(port: number) {
  const received: Received[] = [];
  const sockets = new Set<Socket>();
  let mode: 'hang' | 'answer' = 'hang';
  let server: Server | undefined;
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      server = createServer((request, response) => {
        const chunks: Buffer[] = [];
        request.on('data', (chunk: Buffer) => chunks.push(chunk));
        request.on('end', () => {
          received.push({
            delivery: String(request.headers['hostctl-delivery'] ?? ''),
            signature: String(request.headers['hostctl-signature'] ?? ''),
            body: Buffer.concat(chunks).toString('utf8'),
          });
          if (mode === 'answer') response.writeHead(204).end();
        });
      });
      server.on('connection', (socket) => {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
      });
      server.once('error', reject);
      server.listen(port, '127.0.0.1', resolve);
    });
  return {
    received,
    listen,
    answer: async () => {
      mode = 'answer';
      await listen();
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
      server = undefined;
    },
  };
}

const verifies = (secret: string, received: Received) => {
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(received.signature);
  if (!match) return false;
  const expected = createHmac('sha256', secret).update(`${match[1]}.${received.body}`).digest();
  return timingSafeEqual(expected, Buffer.from(match[2]!, 'hex'));
};

async function until<T>(
  what: string,
  probe: () => Promise<T | false | undefined>,
  timeoutMs: number,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(200);
  }
}

/** A free loopback port inside the NOTIFICATION_ALLOWED_HOSTS range the stack runs with (fault-injection.test.ts). */
async function allowlistedPort(): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (port >= 32768 && port <= 60999) return port;
  }
}

export async function notificationDurabilityPhase(
  { stack, db, ledger, report, redis }: PhaseContext,
  api: { client: FaultClient; customerId: string },
): Promise<void> {
  const port = await allowlistedPort();
  const receiver = startReceiver(port);
  await receiver.listen();
  const created = await api.client.post<{ id: string; secret: string }>('/api/notification-subscriptions', {
    customer_id: api.customerId,
    url: `http://127.0.0.1:${port}/hook`,
    events: ['deployment.succeeded', 'deployment.failed'],
    description: 'fault suite receiver',
  });
  if (created.status !== 201)
    throw new Error(`subscription refused: ${created.status} ${JSON.stringify(created.body)}`);
  const { id: subscriptionId, secret } = created.body;
  try {
    const first = ledger.accepted.length;
    await ledger.create();
    await waitFinal(db, ledger.accepted.slice(first), 90_000);
    const hung = await until(
      'the first attempt reaches the receiver',
      async () => receiver.received[0],
      60_000,
    );
    const kills = await Promise.all(stack.workers.map((worker) => stack.signal(worker, 'SIGKILL')));
    report.note(`attempt in flight (receiver not answering): SIGKILLed ${kills.length} workers`);
    await redis.restart(1500, () => receiver.close());
    await Promise.all(stack.workers.map((_, index) => stack.startWorker(index)));
    const refusedAt = Date.now();
    const refused = await until(
      'an attempt refused while the receiver is down',
      async () => {
        const row = await db.notificationDelivery.findUnique({ where: { id: hung.delivery } });
        return row !== null && row.attempts >= 2 && row.lastError !== null ? row : undefined;
      },
      60_000,
    );
    report.note(
      `workers back, Redis empty, receiver down: attempt ${refused.attempts} failed (${refused.lastError}) ${((Date.now() - refusedAt) / 1000).toFixed(1)} s after the restart`,
    );
    await receiver.answer();
    const upAt = Date.now();
    const rows = await until(
      'every delivery delivered',
      async () => {
        const all = await db.notificationDelivery.findMany({ where: { subscriptionId } });
        return all.length > 0 && all.every((row) => row.status === 'delivered') && all;
      },
      60_000,
    );
    report.note(
      `receiver up: ${rows.length} deliveries delivered within ${((Date.now() - upAt) / 1000).toFixed(1)} s; ${receiver.received.length} requests received`,
    );
    for (const row of rows) {
      const requests = receiver.received.filter((request) => request.delivery === row.id);
      report.check(requests.length >= 1, `delivery ${row.id} never reached the receiver`);
      report.check(
        requests.every((request) => verifies(secret, request)),
        `delivery ${row.id}: a request whose signature does not verify`,
      );
      report.check(
        new Set(requests.map((request) => request.body)).size === 1,
        `delivery ${row.id}: the body changed between attempts`,
      );
    }
    const hungRequests = receiver.received.filter((request) => request.delivery === hung.delivery);
    report.check(
      hungRequests.length >= 2,
      'the delivery cut by the kill was not sent again under the same Hostctl-Delivery id',
    );
    report.check(
      receiver.received.every((request) => rows.some((row) => row.id === request.delivery)),
      'the receiver got a Hostctl-Delivery id that matches no delivery',
    );
  } finally {
    // Later phases deploy too: the subscription stops here, and the receiver with it.
    await api.client.request('PATCH', `/api/notification-subscriptions/${subscriptionId}`, {
      enabled: false,
    });
    await receiver.close();
  }
}
