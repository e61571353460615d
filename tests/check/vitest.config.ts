import { defineProject } from 'vitest/config';

// The static gate itself: `pnpm install && pnpm typecheck` on a copy of the working tree.
export default defineProject({
  test: {
    name: 'check',
    isolate: false,
    include: ['src/**/*.test.ts'],
    testTimeout: 600_000,
    hookTimeout: 600_000,
  },
});
