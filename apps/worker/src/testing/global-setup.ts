import Docker from 'dockerode';
import setupDatabase from './database-setup.js';
import { TEST_IMAGE } from './test-env.js';

/**
 * Runs once before the worker tests: creates and migrates the worker's own test database and
 * checks the engine has the local test image (the stack scripts build it; no registry is reachable).
 */
export default async function setup(): Promise<void> {
  await setupDatabase();
  const docker = new Docker({ socketPath: process.env.DOCKER_SOCKET ?? '/var/run/docker.sock' });
  await docker.ping();
  await docker
    .getImage(TEST_IMAGE)
    .inspect()
    .catch(() => {
      throw new Error(
        `the test image ${TEST_IMAGE} is missing: build it as STACK-NOTES describes (busybox-static rootfs + docker import)`,
      );
    });
}
