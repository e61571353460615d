import { defineProject } from 'vitest/config';

export default defineProject({
  test: { name: 'domain', isolate: false, include: ['src/**/*.test.ts'] },
});
