import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// The fault-injection suite: `pnpm test:fault`. Not a project of the root vitest.workspace.ts
// (it SIGKILLs workers and restarts its Redis, and Docker with FAULT_RESTART_DOCKER=1), so it runs
// as its own steps of scripts/test-all.sh: with FAULT_RUNTIME=swarm (it restarts the swarm engine)
// beside other tests once nothing else uses that engine; on the single engine alone and last.
export default defineConfig({
  test: {
    name: 'fault',
    root: path.dirname(fileURLToPath(import.meta.url)),
    include: ['src/**/*.test.ts'],
    globalSetup: ['src/global-setup.ts'],
    fileParallelism: false,
    // The whole run stays well under 8 minutes; each phase bounds its own waits.
    testTimeout: 450_000,
    hookTimeout: 120_000,
  },
});
