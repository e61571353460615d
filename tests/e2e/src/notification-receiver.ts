import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One notification as a customer's receiver saw it, with its signature checked independently. */
export interface ReceivedNotification {
  event: string;
  deliveryId: string;
  verified: boolean;
  body: { event: string; deployment?: { id: string; status: string } };
}

export interface NotificationReceiver {
  url: string;
  /** The secret the subscription's creation answered once; until set, nothing verifies. */
  secret: string;
  received: ReceivedNotification[];
  /** Resolves with the first notification matching `match`, or rejects after `timeoutMs`. */
  waitFor(match: (n: ReceivedNotification) => boolean, timeoutMs?: number): Promise<ReceivedNotification>;
  close(): Promise<void>;
}

/** Verifies `Hostctl-Signature: t=<s>,v1=<hex>` the way docs/notifications.md tells receivers to. */
function verify(secret: string, header: string | undefined, raw: string): boolean {
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header ?? '');
  if (!match || !secret) return false;
  const expected = createHmac('sha256', secret).update(`${match[1]}.${raw}`).digest();
  return timingSafeEqual(expected, Buffer.from(match[2]!, 'hex'));
}

/** A customer's HTTP receiver on loopback (an ephemeral port, inside the NOTIFICATION_ALLOWED_HOSTS the stack is given). */
export async function startNotificationReceiver(): Promise<NotificationReceiver> {
  const received: ReceivedNotification[] = [];
  const receiver: NotificationReceiver = {
    url: '',
    secret: '',
    received,
    async waitFor(match, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        const found = received.find(match);
        if (found) return found;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      throw new Error(`no matching notification within ${timeoutMs} ms: ${JSON.stringify(received)}`);
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const server = createServer((request, response) => {
    let raw = '';
    request.on('data', (chunk: Buffer) => (raw += chunk.toString()));
    request.on('end', () => {
      received.push({
        event: String(request.headers['hostctl-event'] ?? ''),
        deliveryId: String(request.headers['hostctl-delivery'] ?? ''),
        verified: verify(receiver.secret, request.headers['hostctl-signature'] as string | undefined, raw),
        body: JSON.parse(raw) as ReceivedNotification['body'],
      });
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hostctl`;
  return receiver;
}
