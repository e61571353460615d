import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: { name: 'cli', isolate: false, include: ['src/**/*.test.ts'] },
});
