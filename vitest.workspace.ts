// The whole test suite: each app and package is a Vitest project with its own vitest.config.ts.
// Run with `pnpm test` (vitest run --config vitest.workspace.ts).
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: [
      'packages/*',
      'apps/*',
      'apps/worker/vitest.logic.config.ts',
      'tests/*',
      'tests/e2e/vitest.swarm.config.ts',
      '!tests/fault',
    ],
  },
});
