import { defineConfig } from 'vitest/config';

// Files share one module graph (isolate: false): on 2 cores they run one after another, and
// importing the API's modules again for every file cost more than the tests (docs/dev-stack.md#tests).
export default defineConfig({
  test: {
    name: 'api',
    isolate: false,
    include: ['src/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
