import { defineProject } from 'vitest/config';

export default defineProject({
  test: { name: 'api-client', isolate: false, include: ['src/**/*.test.ts'] },
});
