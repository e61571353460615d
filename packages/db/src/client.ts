import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaClient } from './generated/client.ts';

export type Db = InstanceType<typeof PrismaClient>;

/**
 * The same connection pool, for the few hot reads written as SQL (see docs/performance.md): Prisma
 * costs ~0.2–0.3 ms of CPU per statement, which on the per-request path of every authenticated
 * read was most of the API's work. Writes and everything else stay on Prisma.
 */
export type SqlPool = pg.Pool;

export interface DbOptions {
  url: string;
  /** Pool size per process; keep small: api and worker replicas multiply it. */
  max?: number;
}

export interface Database {
  db: Db;
  sql: SqlPool;
}

/** A Prisma client and the pg pool beneath it: one pool per process, ended by `db.$disconnect()`. */
export function createDatabase(options: DbOptions): Database {
  const sql = new pg.Pool({
    connectionString: options.url,
    max: options.max ?? 10,
    // Fail fast when Postgres is unreachable instead of hanging the request (maps to 503).
    connectionTimeoutMillis: 3000,
  });
  // An idle connection that dies (Postgres restarted) must not crash the process: the pool drops
  // it and the next query connects again, or fails and is answered with a 503.
  sql.on('error', () => undefined);
  const adapter = new PrismaPg(sql, { disposeExternalPool: true });
  return { db: new PrismaClient({ adapter }), sql };
}

export function createDb(options: DbOptions): Db {
  return createDatabase(options).db;
}
