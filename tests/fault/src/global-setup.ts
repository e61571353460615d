import Docker from 'dockerode';
import { migrate, MIGRATIONS_DIR, recreateDatabase } from '@hostctl/db';
import {
  DOCKER_SOCKET,
  FAULT_DATABASE_URL,
  FAULT_RUNTIME,
  TEST_IMAGE,
  swarmSocketPath,
} from './fault-env.js';

/**
 * A fresh database per run: the reconciler acts on every row it finds, so rows an interrupted
 * earlier run left behind must not be deployed again under this run's installation label.
 */
export default async function setup(): Promise<void> {
  await recreateDatabase(FAULT_DATABASE_URL);
  await migrate(FAULT_DATABASE_URL, MIGRATIONS_DIR);
  const docker = new Docker({ socketPath: DOCKER_SOCKET });
  await docker.ping();
  await docker
    .getImage(TEST_IMAGE)
    .inspect()
    .catch(() => {
      throw new Error(`the test image ${TEST_IMAGE} is missing: scripts/setup-services.sh builds it`);
    });
  if (FAULT_RUNTIME === 'swarm') {
    const swarm = new Docker({ socketPath: swarmSocketPath() });
    const info = (await swarm.info()) as { Swarm?: { LocalNodeState?: string } };
    if (info.Swarm?.LocalNodeState !== 'active')
      throw new Error('the swarm engine is not in swarm mode: scripts/setup-services.sh initialises it');
  }
}
