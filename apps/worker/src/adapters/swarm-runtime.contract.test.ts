import { randomUUID } from 'node:crypto';
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
