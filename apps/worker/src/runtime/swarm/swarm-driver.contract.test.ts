import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { createDockerClient } from '../../adapters/docker-client.js';
import { createDockerRuntime } from '../../adapters/docker-runtime.js';
import { noopRouter } from '../../adapters/router.js';
import { createSwarmJobs } from '../../adapters/swarm-jobs.js';
import { createSwarmLifecycle } from '../../adapters/swarm-lifecycle.js';
import { createSwarmRestarts } from '../../adapters/swarm-restarts.js';
import { createSwarmRuntime } from '../../adapters/swarm-runtime.js';
import { createSwarmStandby } from '../../adapters/swarm-standby.js';
import { createSwarmObservation } from '../../adapters/swarm-telemetry.js';
import { createSwarmTerminals } from '../../adapters/swarm-terminals.js';
import { webPlan } from '../../testing/plan-fixtures.js';
import { serviceRuntimeContract } from '../../testing/service-runtime-contract.js';
import { SWARM_TEST_IMAGE, swarmTestSocket } from '../../testing/test-env.js';
import { createSwarmDriver } from './swarm-driver.js';

/** The Swarm driver as runtime-wiring.ts builds it, on the swarm engine, without a registry. */
function swarmDriver() {
  const socketPath = swarmTestSocket();
  const manager = createDockerClient(socketPath);
  // An installation of its own: no reconciler of the dev stack touches these services.
  const instance = `hostctl-contract-${randomUUID().slice(0, 8)}`;
  const options = { socketPath, instance, timeoutMs: 30_000, pollMs: 200 };
  return createSwarmDriver({
    engine: {
      runtime: createDockerRuntime({ socketPath: process.env.DOCKER_SOCKET ?? '/var/run/docker.sock' }),
      router: noopRouter,
      instance,
      stabilizationMs: 0,
    },
    services: createSwarmRuntime({ ...options, monitorMs: 1000 }),
    lifecycle: createSwarmLifecycle(options),
    restarts: createSwarmRestarts(manager, instance),
    standby: createSwarmStandby(manager, options),
    distribution: {},
    observed: createSwarmObservation({ socketPath }),
    jobs: createSwarmJobs(manager, options),
    terminals: createSwarmTerminals({
      docker: manager,
      managerSocket: socketPath,
      instance,
      nodeSockets: new Map(),
    }),
  });
}

serviceRuntimeContract('swarm', () => ({
  runtime: swarmDriver(),
  image: SWARM_TEST_IMAGE,
  missingImage: `127.0.0.1:5000/hostctl-contract/missing-${randomUUID().slice(0, 8)}:1`,
}));

describe('Swarm runtime: what only Swarm does', { timeout: 90_000 }, () => {
  const runtime = createSwarmRuntime({
    socketPath: swarmTestSocket(),
    instance: `hostctl-contract-${randomUUID().slice(0, 8)}`,
    timeoutMs: 30_000,
    monitorMs: 1000,
    pollMs: 200,
  });
  const serviceId = randomUUID();
  const log = { info: async () => {}, error: async () => {} };
  afterAll(() => runtime.tearDown(serviceId));

  it('runs the replicas a plan asks for, each task observed on its node', async () => {
    const plan = webPlan(SWARM_TEST_IMAGE, { replicas: 2 });
    await runtime.up({ serviceId, deploymentId: randomUUID(), plan }, log);
    const [observed] = await runtime.observe(serviceId);
    expect(observed).toMatchObject({ desiredReplicas: 2, runningReplicas: 2 });
    expect(observed?.tasks.filter((task) => task.state === 'running' && task.node)).toHaveLength(2);
  });
});
