import { defineProject } from 'vitest/config';

export default defineProject({
  test: { name: 'cron', isolate: false, include: ['src/**/*.test.ts'] },
});
