import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A slow notification receiver the test controls: it holds every request open (as a receiver that
 * takes 10 s would) until `release()`, then answers 204 at once. It records what a fairness check
 * needs: how many attempts were open together, overall and per delivery, how many attempts each
 * delivery got, and whether the sender ever gave up on one (its timeout cut the connection).
 */
export interface HeldReceiver {
  url: string;
  /** Attempts open now. */
  readonly open: number;
  /** The most attempts that were open at the same time. */
  readonly maxOpen: number;
  /** The most attempts of one delivery that were open at the same time. */
  readonly maxOpenPerDelivery: number;
  /** Attempts the sender abandoned before the answer (its timeout). */
  readonly cutBySender: number;
  /** Attempts received per Hostctl-Delivery id. */
  attempts: Map<string, number>;
  /** Delivery ids with an attempt open now. */
  openDeliveries(): string[];
  release(): void;
  close(): Promise<void>;
}

export async function startHeldReceiver(): Promise<HeldReceiver> {
  const openByDelivery = new Map<string, number>();
  const waiting: ServerResponse[] = [];
  const attempts = new Map<string, number>();
  let open = 0;
  let maxOpen = 0;
  let maxOpenPerDelivery = 0;
  let cutBySender = 0;
  let isReleased = false;

  const server = createServer((request, response) => {
    const delivery = String(request.headers['hostctl-delivery'] ?? '');
    request.resume();
    request.on('end', () => {
      attempts.set(delivery, (attempts.get(delivery) ?? 0) + 1);
      if (isReleased) return void response.writeHead(204).end();
      open += 1;
      const ofDelivery = (openByDelivery.get(delivery) ?? 0) + 1;
      openByDelivery.set(delivery, ofDelivery);
      maxOpen = Math.max(maxOpen, open);
      maxOpenPerDelivery = Math.max(maxOpenPerDelivery, ofDelivery);
      let isDone = false;
      const done = (isCut: boolean) => {
        if (isDone) return;
        isDone = true;
        open -= 1;
        openByDelivery.set(delivery, (openByDelivery.get(delivery) ?? 1) - 1);
        if (isCut) cutBySender += 1;
      };
      response.on('close', () => done(!response.writableEnded));
      response.on('finish', () => done(false));
      waiting.push(response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));

  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/slow`,
    get open() {
      return open;
    },
    get maxOpen() {
      return maxOpen;
    },
    get maxOpenPerDelivery() {
      return maxOpenPerDelivery;
    },
    get cutBySender() {
      return cutBySender;
    },
    attempts,
    openDeliveries: () => [...openByDelivery].filter(([, count]) => count > 0).map(([id]) => id),
    release() {
      isReleased = true;
      for (const response of waiting.splice(0)) if (!response.writableEnded) response.writeHead(204).end();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
