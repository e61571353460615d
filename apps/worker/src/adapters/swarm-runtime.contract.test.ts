import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { webPlan } from '../testing/plan-fixtures.js';
import { serviceRuntimeContract } from '../testing/service-runtime-contract.js';
import { SWARM_TEST_IMAGE, swarmTestSocket } from '../testing/test-env.js';
import { createSwarmRuntime } from './swarm-runtime.js';

serviceRuntimeContract('swarm', () => ({
  runtime: createSwarmRuntime({
    socketPath: swarmTestSocket(),
    // An installation of its own: no reconciler of the dev stack touches these services.
    instance: `hostctl-contract-${randomUUID().slice(0, 8)}`,
    timeoutMs: 30_000,
    monitorMs: 1000,
    pollMs: 200,
  }),
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
