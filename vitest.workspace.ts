// The whole test suite: each app and package is a Vitest project with its own vitest.config.ts,
// plus the worker's Docker-free logic tests and the e2e files re-run under Swarm; the fault suite
// runs on its own (`pnpm test:fault`). Run with `pnpm test` (vitest run --config vitest.workspace.ts).
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: [
      'packages/*',
      'apps/*',
      'apps/worker/vitest.logic.config.ts',
      'tests/*',
      'tests/e2e/vitest.swarm.config.ts',
      'tests/e2e/vitest.upgrade.config.ts',
      '!tests/fault',
    ],
  },
});
