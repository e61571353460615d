import type { TestProject } from 'vitest/node';
import { ensureDatabase, migrate, MIGRATIONS_DIR } from '@hostctl/db';
import { e2eDatabaseUrl } from './env.js';

/** The database of the project's runtime (its `test.env`: E2E_RUNTIME=swarm for e2e-swarm). */
export default async function setup(project: TestProject): Promise<void> {
  const url = e2eDatabaseUrl(project.config.env?.E2E_RUNTIME === 'swarm' ? 'swarm' : 'docker');
  await ensureDatabase(url);
  await migrate(url, MIGRATIONS_DIR);
}
