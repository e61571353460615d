import type { TestProject } from 'vitest/node';
import { ensureDatabase, migrate, MIGRATIONS_DIR } from '@hostctl/db';
import { buildAppBundles } from '@hostctl/testing';
import { e2eDatabaseUrl } from './env.js';
import { ROOT } from './stack.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Where this run's app bundles are (@hostctl/testing app-bundles.ts): every stack of the run starts from them. */
    bundles: string;
  }
}

/**
 * The database of the project's runtime (its `test.env`: E2E_RUNTIME=swarm for e2e-swarm), and the
 * app bundles the run's stacks start from (removed when the run ends).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const url = e2eDatabaseUrl(project.config.env?.E2E_RUNTIME === 'swarm' ? 'swarm' : 'docker');
  await ensureDatabase(url);
  await migrate(url, MIGRATIONS_DIR);
  const bundles = await buildAppBundles(ROOT);
  project.provide('bundles', bundles.dir);
  return bundles.remove;
}
