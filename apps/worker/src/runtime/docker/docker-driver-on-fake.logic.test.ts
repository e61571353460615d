import { randomUUID } from 'node:crypto';
import { createDockerTelemetry } from '../../adapters/docker-telemetry.js';
import { noopRouter } from '../../adapters/router.js';
import { createFakeRuntime } from '../../testing/fake-runtime.js';
import { serviceRuntimeContract } from '../../testing/service-runtime-contract.js';
import { TEST_IMAGE } from '../../testing/test-env.js';
import { createDockerDriver } from './docker-driver.js';

// The fake engine the logic tests deploy on, held to the same promises as the real drivers: what
// a logic test shows of a deploy, a restore or a delete is what the single engine does.
serviceRuntimeContract('docker driver on the fake engine', () => ({
  runtime: createDockerDriver({
    runtime: createFakeRuntime({ images: [TEST_IMAGE] }),
    router: noopRouter,
    instance: `hostctl-contract-${randomUUID().slice(0, 8)}`,
    readiness: { timeoutMs: 5000, stableMs: 200 },
    stabilizationMs: 200,
    drainMs: 0,
    // Read only by the observers, never by the contract; a client, no connection.
    telemetry: createDockerTelemetry({ socketPath: '/var/run/docker.sock' }),
  }),
  image: TEST_IMAGE,
  // The fake runs no command: its environment says how the process ends (fake-runtime.ts).
  failing: { environment: { FAKE_EXIT_CODE: '3' }, restart: 'no' },
  missingImage: `127.0.0.1:5000/hostctl-contract/missing-${randomUUID().slice(0, 8)}:1`,
}));
