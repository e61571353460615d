import { defineConfig } from 'vitest/config';

// Unit tests of the dashboard's pure logic (URL state, log buffer, virtual list, permissions).
export default defineConfig({
  test: {
    name: 'web',
    isolate: false,
    include: ['src/**/*.test.ts'],
  },
});
