import type { TestProject } from 'vitest/node';
import { createDb, ensureDatabase, migrate, MIGRATIONS_DIR } from '@hostctl/db';
import { TEST_DATABASE_URL } from './test-env.js';

/**
 * Creates and migrates the project's test database and empties it. A run that was killed midway
 * (a suite timeout) leaves services marked running, and the reconcilers of the next run's tests
 * would repair them along with their own: every run starts from no rows. Global setup runs in
 * vitest's main process, where a project's `test.env` is not applied: read it here.
 */
export default async function setup(project?: TestProject): Promise<void> {
  const url = project?.config.env?.WORKER_TEST_DATABASE_URL ?? TEST_DATABASE_URL;
  await ensureDatabase(url);
  await migrate(url, MIGRATIONS_DIR);
  const db = createDb({ url, max: 1 });
  try {
    await db.$executeRawUnsafe('TRUNCATE TABLE customers, services CASCADE');
  } finally {
    await db.$disconnect();
  }
}
