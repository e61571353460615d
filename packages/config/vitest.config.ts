import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: { name: 'config', isolate: false, include: ['src/**/*.test.ts'] },
});
