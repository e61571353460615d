import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/hostctl_test';

export const MIGRATIONS_DIR = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../../../prisma/migrations',
);

/** A throwaway database on the test server (created empty), for tests that migrate from scratch. */
export interface FreshDatabase {
  url: string;
  drop(): Promise<void>;
}

export async function createFreshDatabase(prefix: string): Promise<FreshDatabase> {
  const name = `${prefix}_${randomUUID().slice(0, 8)}`;
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  await onServer((client) => client.query(`CREATE DATABASE ${name}`));
  return {
    url: url.toString(),
    drop: async () => {
      await onServer((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}

/** One connection, which the caller ends. */
export async function connectClient(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return client;
}

/** One connection for the duration of `run`. */
export async function withClient<T>(url: string, run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = await connectClient(url);
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

function onServer<T>(run: (client: pg.Client) => Promise<T>): Promise<T> {
  return withClient(ADMIN_URL, run);
}
