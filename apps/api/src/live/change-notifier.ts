import type { Redis } from 'ioredis';

/**
 * Wake-ups over Redis pub/sub, shared by every waiter of this process on one subscriber connection.
 * A message only says "look again"; the data is always read from its source of truth, so a lost
 * message costs at most one fallback interval.
 */
export interface ChangeNotifier {
  /** Resolves on the next message on the channel, or after timeoutMs, or when aborted. */
  next(channel: string, timeoutMs: number, signal?: AbortSignal): Promise<void>;
  close(): Promise<void>;
}

export function createChangeNotifier(subscriber: Redis): ChangeNotifier {
  const waiters = new Map<string, Set<() => void>>();

  subscriber.on('message', (channel: string) => {
    const set = waiters.get(channel);
    if (!set) return;
    waiters.delete(channel);
    void subscriber.unsubscribe(channel).catch(() => undefined);
    for (const wake of set) wake();
  });

  return {
    next(channel, timeoutMs, signal) {
      return new Promise<void>((resolve) => {
        let set = waiters.get(channel);
        if (!set) {
          set = new Set();
          waiters.set(channel, set);
          // A failed subscribe degrades to the timeout: the caller re-reads then anyway.
          subscriber.subscribe(channel).catch(() => undefined);
        }
        const done = () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', done);
          set.delete(done);
          resolve();
        };
        const timer = setTimeout(done, timeoutMs);
        signal?.addEventListener('abort', done, { once: true });
        set.add(done);
      });
    },
    async close() {
      for (const set of waiters.values()) for (const wake of set) wake();
      waiters.clear();
      await subscriber.quit().catch(() => undefined);
    },
  };
}
