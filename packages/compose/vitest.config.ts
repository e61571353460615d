import { defineProject } from 'vitest/config';

export default defineProject({
  test: { name: 'compose', isolate: false, include: ['src/**/*.test.ts'] },
});
