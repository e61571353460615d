import { defineProject } from 'vitest/config';

// End-to-end files run again with every stack's worker on Docker Swarm (E2E_RUNTIME=swarm:
// src/env.ts); what runs a service is read through src/workloads.ts (containers on the single
// engine, Swarm services and tasks on the swarm engine), so each file asserts the same promises on
// both. Plus the Swarm-only files (swarm-*.test.ts), which the e2e project excludes so that nothing
// uses the swarm engine once this project has finished.
export default defineProject({
  test: {
    name: 'e2e-swarm',
    include: [
      'src/logs-and-health.test.ts',
      'src/ci-pipeline.test.ts',
      'src/zero-downtime-releases.test.ts',
      'src/service-lifecycle.test.ts',
      'src/template-variables.test.ts',
      'src/rollback-and-cancel.test.ts',
      'src/exec-terminal.test.ts',
      'src/swarm-*.test.ts',
    ],
    globalSetup: ['src/global-setup.ts'],
    env: { E2E_RUNTIME: 'swarm' },
    fileParallelism: false,
    testTimeout: 180_000,
    hookTimeout: 120_000,
  },
});
