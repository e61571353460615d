import { defineProject } from 'vitest/config';

// Docker-heavy: files run one at a time (they share one engine) and get generous timeouts.
export default defineProject({
  test: {
    name: 'worker',
    include: ['src/**/*.test.ts'],
    exclude: ['src/**/*.logic.test.ts'],
    globalSetup: ['src/testing/global-setup.ts'],
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
