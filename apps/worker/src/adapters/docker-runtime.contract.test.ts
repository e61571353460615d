import { runtimeContract } from '../testing/runtime-contract.js';
import { TEST_IMAGE } from '../testing/test-env.js';
import { createDockerRuntime } from './docker-runtime.js';

runtimeContract('docker', () => ({
  runtime: createDockerRuntime({ socketPath: process.env.DOCKER_SOCKET ?? '/var/run/docker.sock' }),
  image: TEST_IMAGE,
}));
