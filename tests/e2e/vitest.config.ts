import { configDefaults, defineProject } from 'vitest/config';

// End-to-end: real api, worker and CLI processes against real PostgreSQL, Redis and Docker.
// The Swarm-only files run in e2e-swarm (vitest.swarm.config.ts) alone, so that nothing of this
// project uses the swarm engine; the rolling upgrade runs in its own project (vitest.upgrade.config.ts).
export default defineProject({
  test: {
    name: 'e2e',
    include: ['src/**/*.test.ts'],
    exclude: [...configDefaults.exclude, 'src/swarm-*.test.ts', 'src/upgrade/**'],
    globalSetup: ['src/global-setup.ts'],
    fileParallelism: false,
    testTimeout: 180_000,
    hookTimeout: 120_000,
  },
});
