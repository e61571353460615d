import { createHash, randomBytes } from 'node:crypto';
import Fastify from 'fastify';
import secureSession from '@fastify/secure-session';
import { Redis } from 'ioredis';
import pg from 'pg';
import { generateApiKey } from '@hostctl/auth-policy';
import { createBootstrapStore, createDb, keyringFromEnvironment } from '@hostctl/db';
import { deriveCookieKey } from '@hostctl/auth-policy';
import { assertBenchDatabase, BENCH } from './config.js';
import { run } from './proc.js';

/** Creates (when missing) and migrates the bench database with the project's own migrator. */
export async function migrateBenchDatabase(): Promise<void> {
  assertBenchDatabase(BENCH.databaseUrl);
  await run('pnpm', ['-s', 'db:migrate'], { DATABASE_URL: BENCH.databaseUrl });
}

export function benchPool(max = 4): pg.Pool {
  return new pg.Pool({ connectionString: BENCH.databaseUrl, max });
}

/** Empties every table of the bench database (never another one: see assertBenchDatabase). */
export async function resetData(pool: pg.Pool): Promise<void> {
  assertBenchDatabase(BENCH.databaseUrl);
  await pool.query(
    'TRUNCATE deployment_logs, deployments, service_events, services, api_keys, users, customers RESTART IDENTITY CASCADE',
  );
}

/** Only the services (and what hangs off them): the users, keys and customers stay. */
export async function deleteServices(pool: pg.Pool): Promise<void> {
  assertBenchDatabase(BENCH.databaseUrl);
  // services is DELETEd, not TRUNCATEd with CASCADE: api_keys references services (deploy
  // tokens), and a cascading TRUNCATE empties every referencing table whole, the bench's admin key
  // included. DELETE also runs the service_counts triggers, so the counts stay true.
  await pool.query(
    'TRUNCATE deployment_logs, deployments, service_events, service_custom_domains RESTART IDENTITY',
  );
  await pool.query('DELETE FROM services');
}

/** Removes the bench's Redis keys (queues, sessions, rate-limit windows) left by an earlier run. */
export async function resetRedis(): Promise<void> {
  const redis = new Redis(BENCH.redisUrl, { lazyConnect: true });
  await redis.connect();
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${BENCH.queuePrefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

const COMPANIES = [
  'acme',
  'globex',
  'initech',
  'umbrella',
  'hooli',
  'stark',
  'wayne',
  'tyrell',
  'cyberdyne',
  'soylent',
];

/**
 * 50 customers (`acme-01` … `soylent-05`). Services are spread over them with a skew (a few big
 * customers, many small ones), which is what makes the customer_id filter worth measuring.
 */
export async function seedCustomers(pool: pg.Pool): Promise<{ ids: string[] }> {
  const names = Array.from(
    { length: 50 },
    (_, i) => `${COMPANIES[i % 10]}-${String(Math.floor(i / 10) + 1).padStart(2, '0')}`,
  );
  const { rows } = await pool.query<{ id: string }>(
    `INSERT INTO customers (id, name, created_at, updated_at)
     SELECT gen_random_uuid()::text, n, now(), now() FROM unnest($1::text[]) AS n
     RETURNING id`,
    [names],
  );
  return { ids: rows.map((r) => r.id) };
}

/** A compose document of a realistic size for the seeded rows (the list query reads the column). */
const SEED_COMPOSE = `services:
  web:
    image: registry.example.test/shop/web:1.4.2
    ports: ["8080"]
    environment:
      NODE_ENV: production
      LOG_LEVEL: info
      DATABASE_URL: postgres://app@db:5432/app
    depends_on: [db]
    healthcheck:
      test: ["CMD", "wget", "-qO-", "http://127.0.0.1:8080/healthz"]
      interval: 10s
      retries: 3
    deploy:
      resources:
        limits: { cpus: "0.5", memory: 256M }
  db:
    image: registry.example.test/library/postgres:16
    volumes: ["data:/var/lib/postgresql/data"]
volumes:
  data: {}
`;

/**
 * Adds services until the table holds `total` rows, in one INSERT … SELECT generate_series.
 * Names are unique DNS labels like `shop-prod-eu-00042`; statuses ≈ 70 % running, 18 % stopped,
 * 7 % failed, 5 % deploying; creation dates spread over two years; 3 %, spread over that time, are
 * soft-deleted (they must stay invisible: the `deleted_at IS NULL` filter skips them).
 */
export async function growServices(pool: pg.Pool, total: number): Promise<void> {
  const { rows } = await pool.query<{ n: string }>('SELECT count(*) AS n FROM services');
  const from = Number(rows[0]!.n) + 1;
  if (from > total) return;
  await pool.query(
    `WITH c AS (SELECT array_agg(id ORDER BY name) AS ids FROM customers),
          g AS (SELECT i, random() AS r1, random() AS r2, random() AS r3, random() AS r4, random() AS r5, random() AS r6
                FROM generate_series($1::int, $2::int) AS i)
     INSERT INTO services (id, name, customer_id, status, deploy_method, template_id, compose, variables, url,
                           health_status, cpu_usage, memory_usage_mb, memory_limit_mb, created_at, updated_at, deleted_at)
     SELECT gen_random_uuid()::text, s.name, c.ids[1 + floor(power(g.r2, 2) * array_length(c.ids, 1))::int],
            (CASE WHEN g.r1 < 0.70 THEN 'running' WHEN g.r1 < 0.88 THEN 'stopped' WHEN g.r1 < 0.95 THEN 'failed' ELSE 'deploying' END)::"ServiceStatus",
            (CASE WHEN g.r3 < 0.5 THEN 'template' WHEN g.r3 < 0.8 THEN 'compose' WHEN g.r3 < 0.95 THEN 'git' ELSE 'ai' END)::"DeployMethod",
            CASE WHEN g.r3 < 0.5 THEN (ARRAY['wordpress', 'ghost', 'n8n', 'uptime-kuma', 'plausible'])[1 + (g.i % 5)] END,
            $3, '{"LOG_LEVEL":"info"}'::jsonb, 'http://' || s.name || '.apps.localhost',
            'healthy', round((g.r4 * 50)::numeric, 2), round((g.r4 * 200)::numeric, 1), 256,
            s.created_at, s.created_at + (now() - s.created_at) * g.r4, CASE WHEN g.r6 < 0.03 THEN s.created_at + (now() - s.created_at) * g.r6 * 30 END
     FROM g CROSS JOIN c
     CROSS JOIN LATERAL (SELECT
         (ARRAY['shop', 'blog', 'api', 'web', 'auth', 'cms', 'docs', 'admin', 'cache', 'search', 'mail', 'chat'])[1 + (g.i % 12)]
         || '-' || (ARRAY['prod', 'staging', 'dev', 'preview'])[1 + (g.i / 12 % 4)]
         || '-' || (ARRAY['eu', 'us', 'ap'])[1 + (g.i / 48 % 3)]
         || '-' || lpad(g.i::text, 6, '0') AS name,
         now() - interval '730 days' * g.r5 AS created_at) AS s`,
    [from, total, SEED_COMPOSE],
  );
  // What autovacuum leaves on a table that changes slowly: statistics and an up-to-date visibility
  // map (index-only scans depend on it).
  await pool.query('VACUUM ANALYZE services');
  // Seeding added every service in one transaction, so the trigger wrote ~100k versions of the
  // ~200 count rows that no pruning could remove meanwhile (819 pages). Services created one
  // request at a time leave the table a few pages (HOT updates pruned in place, fillfactor 50):
  // compact it to that state rather than measure an artefact of the seeding.
  await pool.query('VACUUM FULL ANALYZE service_counts');
}

/**
 * `count` stopped services with no deployment, spread over the customers: rows a schedule can be
 * created on (the API needs no release for that) without deploying each one. Stopped, so no
 * worker's reconciler tries to restore them.
 */
export async function insertStoppedServices(
  pool: pg.Pool,
  customerIds: string[],
  count: number,
): Promise<string[]> {
  const { rows } = await pool.query<{ id: string }>(
    `INSERT INTO services (id, name, customer_id, status, deploy_method, compose, url, created_at, updated_at)
     SELECT gen_random_uuid()::text, s.name, ($1::text[])[1 + i % array_length($1::text[], 1)], 'stopped', 'compose', '',
            'http://' || s.name || '.apps.localhost', now(), now()
     FROM generate_series(0, $2::int - 1) AS i
     CROSS JOIN LATERAL (SELECT 'bench-idle-' || lpad(i::text, 3, '0') || '-' || substr(md5(random()::text), 1, 6) AS name) AS s
     RETURNING id`,
    [customerIds, count],
  );
  return rows.map((r) => r.id);
}

/** An admin (all customers) with an API key created the way the CLI creates one. */
export async function createAdminWithKey(): Promise<{ userId: string; authorization: string }> {
  const db = createDb({ url: BENCH.databaseUrl, max: 1, keys: keyringFromEnvironment(process.env) });
  try {
    const store = createBootstrapStore(db);
    const user = await store.ensureUser({
      email: 'bench-admin@bench.test',
      name: 'Bench admin',
      role: 'admin',
      customerId: null,
    });
    const { key, digest } = generateApiKey();
    await store.createApiKey({ userId: user.id, name: 'bench', digest, expiresAt: null });
    return { userId: user.id, authorization: `Bearer ${key}` };
  } finally {
    await db.$disconnect();
  }
}

/**
 * A browser session as sign-in leaves it (see apps/api/src/auth/session-store.ts): the record in
 * Redis under sha256(secret), the secret in the encrypted `session` cookie. This is what the auth
 * tests do (encodeSecureSession with the key derived from SESSION_SECRET), minus the OIDC dance.
 */
export async function createSessionCookie(userId: string, ttlSeconds = 3600): Promise<string> {
  const secret = randomBytes(32).toString('base64url');
  const handle = createHash('sha256').update(secret).digest('hex');
  const redis = new Redis(BENCH.redisUrl, { lazyConnect: true });
  await redis.connect();
  try {
    const record = JSON.stringify({ userId, createdAt: new Date().toISOString(), idToken: null });
    await redis
      .multi()
      .set(`${BENCH.queuePrefix}:auth:session:${handle}`, record, 'EX', ttlSeconds)
      .sadd(`${BENCH.queuePrefix}:auth:user-sessions:${userId}`, handle)
      .expire(`${BENCH.queuePrefix}:auth:user-sessions:${userId}`, ttlSeconds)
      .exec();
  } finally {
    redis.disconnect();
  }
  const app = Fastify({ logger: false });
  await app.register(secureSession, {
    sessionName: 'session',
    cookieName: 'session',
    key: deriveCookieKey(BENCH.sessionSecret, 'session'),
  });
  await app.ready();
  try {
    return `session=${encodeURIComponent(app.encodeSecureSession(app.createSecureSession({ sid: secret }), 'session'))}`;
  } finally {
    await app.close();
  }
}
