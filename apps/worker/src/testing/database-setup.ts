import type { TestProject } from 'vitest/node';
import { ensureDatabase, migrate, MIGRATIONS_DIR } from '@hostctl/db';
import { TEST_DATABASE_URL } from './test-env.js';

/**
 * Creates and migrates the project's test database (once per run; migrate is idempotent). Global
 * setup runs in vitest's main process, where a project's `test.env` is not applied: read it here.
 */
export default async function setup(project?: TestProject): Promise<void> {
  const url = project?.config.env?.WORKER_TEST_DATABASE_URL ?? TEST_DATABASE_URL;
  await ensureDatabase(url);
  await migrate(url, MIGRATIONS_DIR);
}
