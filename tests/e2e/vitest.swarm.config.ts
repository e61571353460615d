import { defineProject } from 'vitest/config';

// The end-to-end files whose assertions go through the API and the proxy only, run again with the
// worker on Docker Swarm (E2E_RUNTIME=swarm: src/env.ts), plus the Swarm-only file. Files that
// look at the single engine's containers themselves stay in the e2e project alone.
export default defineProject({
  test: {
    name: 'e2e-swarm',
    include: ['src/logs-and-health.test.ts', 'src/ci-pipeline.test.ts', 'src/zero-downtime-releases.test.ts'],
    globalSetup: ['src/global-setup.ts'],
    env: { E2E_RUNTIME: 'swarm' },
    fileParallelism: false,
    testTimeout: 180_000,
    hookTimeout: 120_000,
  },
});
