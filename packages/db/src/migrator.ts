import { createHash, randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

/**
 * Applies prisma/migrations/<name>/migration.sql in order and records each in `_prisma_migrations`
 * exactly as `prisma migrate deploy` does, so either tool can take over. An advisory lock makes
 * concurrent starts (several replicas) apply each migration once.
 */
const LOCK_KEY = 72707369; // arbitrary constant shared by every migrator process

const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
  "id" VARCHAR(36) PRIMARY KEY NOT NULL,
  "checksum" VARCHAR(64) NOT NULL,
  "finished_at" TIMESTAMPTZ,
  "migration_name" VARCHAR(255) NOT NULL,
  "logs" TEXT,
  "rolled_back_at" TIMESTAMPTZ,
  "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "applied_steps_count" INTEGER NOT NULL DEFAULT 0
)`;

export interface MigrationResult {
  applied: string[];
  skipped: string[];
}

/** Runs `work` on the server's `postgres` database with the (quoted) name of the URL's database. */
async function onServer(
  databaseUrl: string,
  work: (client: pg.Client, name: string, quoted: string) => Promise<void>,
) {
  const name = decodeURIComponent(new URL(databaseUrl).pathname.slice(1));
  const admin = new URL(databaseUrl);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    await work(client, name, `"${name.replace(/"/g, '""')}"`);
  } finally {
    await client.end();
  }
}

/** Creates the database named in the URL when it does not exist (concurrent callers are fine). */
export async function ensureDatabase(databaseUrl: string): Promise<void> {
  await onServer(databaseUrl, async (client, name, quoted) => {
    try {
      const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
      if (found.rowCount === 0) await client.query(`CREATE DATABASE ${quoted}`);
    } catch (error) {
      // Two processes creating it at once: the loser sees a duplicate, which is what it wanted.
      const code = (error as { code?: string }).code;
      if (code !== '42P04' && code !== '23505') throw error;
    }
  });
}

/**
 * Drops the database named in the URL (closing its connections) and creates it empty. For test
 * databases only: a run starts from no rows, and from no data keys an earlier clone's
 * key-encryption key wrapped.
 */
export async function recreateDatabase(databaseUrl: string): Promise<void> {
  await onServer(databaseUrl, async (client, _name, quoted) => {
    await client.query(`DROP DATABASE IF EXISTS ${quoted} WITH (FORCE)`);
  });
  await ensureDatabase(databaseUrl);
}

/** The repository's migrations directory, for tools and tests that migrate a database. */
export const MIGRATIONS_DIR = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../../prisma/migrations',
);

export async function migrate(databaseUrl: string, migrationsDir: string): Promise<MigrationResult> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [LOCK_KEY]);
    await client.query(CREATE_TABLE);
    const done = await client.query<{ migration_name: string; checksum: string }>(
      'SELECT migration_name, checksum FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL',
    );
    const applied = new Map(done.rows.map((row) => [row.migration_name, row.checksum]));
    const result: MigrationResult = { applied: [], skipped: [] };
    for (const name of await listMigrations(migrationsDir)) {
      const sql = await readFile(path.join(migrationsDir, name, 'migration.sql'), 'utf8');
      const checksum = createHash('sha256').update(sql).digest('hex');
      const previous = applied.get(name);
      if (previous !== undefined) {
        if (previous !== checksum) throw new Error(`migration ${name} was modified after it was applied`);
        result.skipped.push(name);
        continue;
      }
      await applyOne(client, name, sql, checksum);
      result.applied.push(name);
    }
    return result;
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [LOCK_KEY]).catch(() => undefined);
    await client.end();
  }
}

async function listMigrations(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  return entries
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
}

async function applyOne(client: pg.Client, name: string, sql: string, checksum: string): Promise<void> {
  const id = randomUUID();
  await client.query('BEGIN');
  try {
    await client.query(
      'INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at) VALUES ($1, $2, $3, now())',
      [id, checksum, name],
    );
    await client.query(sql);
    await client.query(
      'UPDATE "_prisma_migrations" SET finished_at = now(), applied_steps_count = 1 WHERE id = $1',
      [id],
    );
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK');
    throw new Error(`migration ${name} failed: ${(error as Error).message}`, { cause: error });
  }
}
