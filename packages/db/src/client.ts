import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaClient } from './generated/client.ts';
import { SecretsKeyError, type KeyEncryptionKeys } from './vault/key-encryption-keys.js';
import { withSealedColumns } from './vault/sealed-columns.js';
import { createVault, type Vault } from './vault/vault.js';

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
  /**
   * The operator's key-encryption keys: variables are sealed with them at rest (docs/secrets.md).
   * Without them, writing or reading a sealed column fails (never a plaintext write, never an
   * empty value): tools that touch no variables may leave it out.
   */
  keys?: KeyEncryptionKeys;
}

export interface Database {
  db: Db;
  sql: SqlPool;
  /** Opens values read with raw SQL on `sql`, whose results bypass the client's decryption. */
  vault: Vault;
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
  const base = new PrismaClient({ adapter });
  const vault = createVault(base, options.keys ?? createMissingKeys());
  return { db: withSealedColumns(base, vault), sql, vault };
}

/** Stands in when no key was given: any use names what is missing. */
function createMissingKeys(): KeyEncryptionKeys {
  const refuse = () =>
    Promise.reject(
      new SecretsKeyError('no key-encryption key configured: set SECRETS_KEK or SECRETS_KEK_FILE'),
    );
  return { currentId: '', has: () => false, wrap: refuse, unwrap: refuse };
}

export function createDb(options: DbOptions): Db {
  return createDatabase(options).db;
}
