import { defineProject } from 'vitest/config';

export default defineProject({
  test: { name: 'cron', include: ['src/**/*.test.ts'] },
});
