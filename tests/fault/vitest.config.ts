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
    // Each phase bounds its own waits. The run took 265 s alone on a quiet machine and 360 s at
    // load 9-14 (the cutover phase restarts every worker when a kill lands while the release
    // pauses in its window, 121 s of it): 10 minutes leaves room on a loaded machine.
    testTimeout: 600_000,
    hookTimeout: 120_000,
  },
});
