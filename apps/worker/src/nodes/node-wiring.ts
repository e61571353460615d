import type { WorkerConfig } from '@hostctl/config';
import { createWorkerNodesStore, type AdvisoryLocks, type Db } from '@hostctl/db';
import type { Logger } from 'pino';
import { createDockerClient } from '../adapters/docker-client.js';
import { createSwarmNodes } from '../adapters/swarm-nodes.js';
import { createLeadership } from '../health/leadership.js';
import { createNodeAvailabilityProcessor } from './node-availability.processor.js';
import { createNodeObserver } from './node-observer.js';

/**
 * The nodes side of RUNTIME=swarm: the snapshot observer (one replica at a time, its own
 * leadership so it never waits behind a slow health sweep) and the drain/activate processor.
 * Without nodes (RUNTIME=docker: `hasNodes` false) the observer never starts, no node rows exist,
 * and the processor finds nothing to do.
 */
export function createNodes(deps: {
  config: Pick<WorkerConfig, 'NODES_INTERVAL_MS' | 'QUEUE_PREFIX'>;
  /** Whether there are nodes to watch (the composition root: RUNTIME=swarm). */
  hasNodes: boolean;
  /** The swarm manager's socket (the engine the Swarm driver deploys to). */
  managerSocket: string;
  db: Db;
  locks: AdvisoryLocks;
  logger: Logger;
}) {
  const { config, logger } = deps;
  const instance = config.QUEUE_PREFIX;
  const swarm = createSwarmNodes(createDockerClient(deps.managerSocket), instance);
  const store = createWorkerNodesStore(deps.db, instance);
  const leadership = createLeadership(deps.locks, `hostctl:nodes:${instance}`);
  const observer = createNodeObserver({
    swarm,
    store,
    leadership,
    intervalMs: config.NODES_INTERVAL_MS,
    logger,
  });
  return {
    observer,
    processor: createNodeAvailabilityProcessor({
      swarm,
      store,
      refresh: () => observer.observeOnce(),
      logger,
    }),
    start(): void {
      if (deps.hasNodes) observer.start();
    },
    async stop(): Promise<void> {
      await observer.stop();
      await leadership.release().catch(() => undefined);
    },
  };
}
