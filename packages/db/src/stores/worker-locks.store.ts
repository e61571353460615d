import pg from 'pg';

/**
 * Cross-replica mutual exclusion with PostgreSQL session advisory locks. Each lease holds its own
 * pooled connection for as long as the work runs: if the process dies, the connection closes and
 * PostgreSQL releases the lock, so a crashed worker can never wedge a service.
 * Key: pg_try_advisory_lock(hashtext(key)); for services the key is the bare service id.
 */
export interface Lease {
  /** False once the connection holding the lock was lost (the lock is gone with it). */
  readonly isHeld: boolean;
  release(): Promise<void>;
}

export interface AdvisoryLocks {
  tryAcquire(key: string): Promise<Lease | null>;
  /** Polls until acquired or `waitMs` passed. */
  acquire(key: string, waitMs: number): Promise<Lease | null>;
  close(): Promise<void>;
}

export function createAdvisoryLocks(options: { url: string; max?: number }): AdvisoryLocks {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.max ?? 10,
    connectionTimeoutMillis: 3000,
  });
  // Idle clients that lose their connection are dropped by the pool; without a listener Node would crash.
  pool.on('error', () => undefined);

  /**
   * Returns (or destroys) a checked-out client, and only then may drop our 'error' listener: a
   * connection that dies while we hold the client must never find it without one, or Node crashes
   * the worker on the unhandled 'error' event (seen when the fault suite cut PostgreSQL).
   */
  const handBack = (client: pg.PoolClient, onError: () => void, destroy: boolean) => {
    client.release(destroy);
    // A destroyed client is never reused and may still report its dead connection while it ends:
    // it keeps the listener. A returned client is now watched by the pool's own idle listener.
    if (!destroy) client.off('error', onError);
  };

  const tryAcquire = async (key: string): Promise<Lease | null> => {
    const client = await pool.connect();
    let isHeld = false;
    const onError = () => {
      isHeld = false;
    };
    client.on('error', onError);
    try {
      const result = await client.query<{ locked: boolean }>(
        'SELECT pg_try_advisory_lock(hashtext($1)) AS locked',
        [key],
      );
      isHeld = result.rows[0]?.locked === true;
    } catch (error) {
      handBack(client, onError, true);
      throw error;
    }
    if (!isHeld) {
      handBack(client, onError, false);
      return null;
    }
    let isReleased = false;
    return {
      get isHeld() {
        return isHeld && !isReleased;
      },
      async release() {
        if (isReleased) return;
        isReleased = true;
        try {
          await client.query('SELECT pg_advisory_unlock(hashtext($1))', [key]);
          handBack(client, onError, false);
        } catch {
          // A connection we cannot unlock on must never go back to the pool still holding the lock.
          handBack(client, onError, true);
        }
      },
    };
  };

  return {
    tryAcquire,
    async acquire(key, waitMs) {
      const deadline = Date.now() + waitMs;
      for (;;) {
        const lease = await tryAcquire(key);
        if (lease || Date.now() >= deadline) return lease;
        await new Promise((resolve) =>
          setTimeout(resolve, Math.min(100, Math.max(0, deadline - Date.now()))),
        );
      }
    },
    async close() {
      await pool.end();
    },
  };
}
