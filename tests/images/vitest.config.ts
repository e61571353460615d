import { defineProject } from 'vitest/config';

// Container images and the production compose file: builds the real images with the Docker engine.
export default defineProject({
  test: {
    name: 'images',
    include: ['src/**/*.test.ts'],
    fileParallelism: false,
    testTimeout: 300_000,
    hookTimeout: 600_000,
  },
});
