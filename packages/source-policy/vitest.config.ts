import { defineProject } from 'vitest/config';

export default defineProject({
  test: { name: 'source-policy', isolate: false, include: ['src/**/*.test.ts'] },
});
