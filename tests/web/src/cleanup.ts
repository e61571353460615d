import { Redis } from 'ioredis';
import pg from 'pg';
import { generateApiKey } from '@hostctl/auth-policy';
import { createBootstrapStore, createDb } from '@hostctl/db';
import { removeInstanceObjects } from '@hostctl/testing';
import { QUEUE_PREFIX, REDIS_URL, WEB_DATABASE_URL } from './env.js';

/** Removes the containers, networks and volumes of the web test stack's instance (nobody else's). */
export const removeDockerObjects = (): Promise<number> => removeInstanceObjects(QUEUE_PREFIX);

/**
 * A clean slate for a run: an interrupted earlier run may have left rows its reconciler would try
 * to restore, and queued jobs. Refuses a database whose name does not say it is the web tests'.
 */
export async function resetState(): Promise<void> {
  const name = new URL(WEB_DATABASE_URL).pathname.slice(1);
  if (!/web/i.test(name))
    throw new Error(`refusing to empty database "${name}": its name must contain "web"`);
  const pool = new pg.Pool({ connectionString: WEB_DATABASE_URL, max: 1 });
  try {
    await pool.query(
      'TRUNCATE deployment_logs, deployments, service_events, services, api_keys, users, customers RESTART IDENTITY CASCADE',
    );
  } finally {
    await pool.end();
  }
  const redis = new Redis(REDIS_URL, { lazyConnect: true });
  await redis.connect();
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${QUEUE_PREFIX}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
  await removeDockerObjects();
}

/** Seeded customers by name. */
export async function customerIds(): Promise<Record<string, string>> {
  const pool = new pg.Pool({ connectionString: WEB_DATABASE_URL, max: 1 });
  try {
    const { rows } = await pool.query<{ id: string; name: string }>('SELECT id, name FROM customers');
    return Object.fromEntries(rows.map((row) => [row.name, row.id]));
  } finally {
    await pool.end();
  }
}

/** An API key of the seeded admin, made the way the CLI makes one (in-process: no tsx start). */
export async function adminApiKey(): Promise<string> {
  const db = createDb({ url: WEB_DATABASE_URL, max: 1 });
  try {
    const store = createBootstrapStore(db);
    const admin = await store.ensureUser({
      email: 'admin@example.test',
      name: 'Ada Admin',
      role: 'admin',
      customerId: null,
    });
    const { key, digest } = generateApiKey();
    await store.createApiKey({ userId: admin.id, name: 'web-tests', digest, expiresAt: null });
    return key;
  } finally {
    await db.$disconnect();
  }
}
