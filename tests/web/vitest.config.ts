import { defineProject } from 'vitest/config';

// The dashboard in Debian's Chromium against the real stack (dev-idp, api serving apps/web/dist,
// worker): one stack for every file, started by the global setup. Budget: ~3 minutes in CI.
export default defineProject({
  test: {
    name: 'web-browser',
    include: ['src/**/*.test.ts'],
    globalSetup: ['src/global-setup.ts'],
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 240_000,
  },
});
