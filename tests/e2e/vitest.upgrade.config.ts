import { defineProject } from 'vitest/config';

// The rolling upgrade from the previous release (src/upgrade/, docs/operations.md#upgrading): its
// own project so test-all.sh can run it in the Docker lane, beside the e2e project.
export default defineProject({
  test: {
    name: 'upgrade',
    include: ['src/upgrade/*.test.ts'],
    globalSetup: ['src/global-setup.ts'],
    fileParallelism: false,
    testTimeout: 180_000,
    hookTimeout: 120_000,
  },
});
