import { randomUUID } from 'node:crypto';
import { noopRouter } from '../../adapters/router.js';
import { createDockerRuntime } from '../../adapters/docker-runtime.js';
import { createDockerTelemetry } from '../../adapters/docker-telemetry.js';
import { serviceRuntimeContract } from '../../testing/service-runtime-contract.js';
import { TEST_IMAGE } from '../../testing/test-env.js';
import { createDockerDriver } from './docker-driver.js';

const socketPath = process.env.DOCKER_SOCKET ?? '/var/run/docker.sock';

serviceRuntimeContract('docker', () => ({
  runtime: createDockerDriver({
    runtime: createDockerRuntime({ socketPath }),
    router: noopRouter,
    // An installation of its own: no reconciler of the dev stack touches these containers.
    instance: `hostctl-contract-${randomUUID().slice(0, 8)}`,
    readiness: { timeoutMs: 20_000, stableMs: 500 },
    stabilizationMs: 1000,
    drainMs: 0,
    telemetry: createDockerTelemetry({ socketPath }),
  }),
  image: TEST_IMAGE,
  missingImage: `127.0.0.1:5000/hostctl-contract/missing-${randomUUID().slice(0, 8)}:1`,
}));
