import { ensureDatabase, migrate, MIGRATIONS_DIR } from '@hostctl/db';
import { TEST_DATABASE_URL } from './test-env.js';

/** Creates and migrates the worker's own test database (once per run; migrate is idempotent). */
export default async function setup(): Promise<void> {
  await ensureDatabase(TEST_DATABASE_URL);
  await migrate(TEST_DATABASE_URL, MIGRATIONS_DIR);
}
