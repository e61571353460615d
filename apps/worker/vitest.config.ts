import { defineProject } from 'vitest/config';

// Docker-heavy: files run one at a time (they share one engine) and get generous timeouts. They
// share one module graph (isolate: false): importing the worker again per file cost 1-2 s each.
export default defineProject({
  test: {
    name: 'worker',
    include: ['src/**/*.test.ts'],
    exclude: ['src/**/*.logic.test.ts'],
    globalSetup: ['src/testing/global-setup.ts'],
    fileParallelism: false,
    isolate: false,
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
