import { defineProject } from 'vitest/config';

// The static gate itself: what `pnpm typecheck` covers, and that it catches an API the CLI no longer matches.
export default defineProject({
  test: {
    name: 'check',
    isolate: false,
    include: ['src/**/*.test.ts'],
    testTimeout: 600_000,
    hookTimeout: 600_000,
  },
});
