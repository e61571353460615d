import { defineProject } from 'vitest/config';

export default defineProject({
  test: { name: 'source-policy', include: ['src/**/*.test.ts'] },
});
