// Baseline servers, each in its own process like the API: `hello` is a bare Fastify hello-world;
// `pg` answers with one pg-pool SELECT of 20 rows from the same services table (same columns as
// a list item, same filter and order as the API's default list), serialised by Fastify.
import Fastify from 'fastify';
import pg from 'pg';

const kind = process.env.BASELINE_KIND;
const port = Number(process.env.BASELINE_PORT);
const app = Fastify({ logger: false });

if (kind === 'hello') {
  app.get('/', async () => ({ hello: 'world' }));
} else if (kind === 'pg') {
  // Pool size as the API's (packages/db createDb: max 10).
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
  app.get('/', async () => {
    const { rows } = await pool.query(
      `SELECT id, name, status, url, customer_id, template_id, deploy_method, created_at, updated_at,
              cpu_usage, memory_usage_mb, memory_limit_mb
       FROM services WHERE deleted_at IS NULL ORDER BY created_at DESC, id DESC LIMIT 20`,
    );
    return { data: rows };
  });
  app.addHook('onClose', async () => pool.end());
} else {
  throw new Error(`unknown BASELINE_KIND ${kind}`);
}

const stop = () => void app.close().then(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
await app.listen({ host: '127.0.0.1', port });
