import { defineProject } from 'vitest/config';

// End-to-end: real api, worker and CLI processes against real PostgreSQL, Redis and Docker.
export default defineProject({
  test: {
    name: 'e2e',
    include: ['src/**/*.test.ts'],
    globalSetup: ['src/global-setup.ts'],
    fileParallelism: false,
    testTimeout: 180_000,
    hookTimeout: 120_000,
  },
});
