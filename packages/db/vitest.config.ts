import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    name: 'db',
    isolate: false,
    include: ['src/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
