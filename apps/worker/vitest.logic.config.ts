import { defineProject } from 'vitest/config';

// The worker's logic without a Docker engine: *.logic.test.ts run on the fake runtime against
// PostgreSQL and Redis only (`pnpm exec vitest run --project worker-logic`), in parallel.
export default defineProject({
  test: {
    name: 'worker-logic',
    include: ['src/**/*.logic.test.ts'],
    globalSetup: ['src/testing/database-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
