import { defineProject } from 'vitest/config';

// The worker's logic without a Docker engine: *.logic.test.ts run on the fake runtime against
// PostgreSQL and Redis only (`pnpm exec vitest run --project worker-logic`), in parallel. They get
// a database of their own: the Docker-backed worker tests run at the same time, and their
// reconcilers sweep every row of theirs (a fake service there would be re-enqueued or routed).
export default defineProject({
  test: {
    name: 'worker-logic',
    isolate: false,
    include: ['src/**/*.logic.test.ts'],
    globalSetup: ['src/testing/database-setup.ts'],
    env: {
      WORKER_TEST_DATABASE_URL:
        process.env.WORKER_LOGIC_TEST_DATABASE_URL ??
        'postgresql://postgres@127.0.0.1:5432/hostctl_worker_logic_test',
    },
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
