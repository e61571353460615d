import Docker from 'dockerode';
import type { TestProject } from 'vitest/node';
import { migrate, MIGRATIONS_DIR, recreateDatabase } from '@hostctl/db';
import { buildAppBundles } from '@hostctl/testing';
import {
  DOCKER_SOCKET,
  FAULT_DATABASE_URL,
  FAULT_RUNTIME,
  ROOT,
  TEST_IMAGE,
  swarmSocketPath,
} from './fault-env.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** This run's app bundles (@hostctl/testing app-bundles.ts): the stack's processes run them. */
    bundles: string;
  }
}

/**
 * A fresh database per run: the reconciler acts on every row it finds, so rows an interrupted
 * earlier run left behind must not be deployed again under this run's installation label. The
 * apps run from bundles built for the run, as production images run them (removed at the end).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
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
  const bundles = await buildAppBundles(ROOT);
  project.provide('bundles', bundles.dir);
  return bundles.remove;
}
