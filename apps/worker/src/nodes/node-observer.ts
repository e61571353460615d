import type { WorkerNodesStore } from '@hostctl/db';
import type { Logger } from 'pino';
import type { SwarmNodes } from '../adapters/swarm-nodes.js';
import type { Leadership } from '../health/leadership.js';
import { createPeriodic, type Periodic } from '../health/periodic.js';

/**
 * Publishes the swarm's nodes and this installation's tasks to PostgreSQL every interval, for the
 * nodes API and the service detail's placement (the API never asks Docker). One replica at a
 * time (the observers' leadership); a sweep that fails leaves the previous snapshot in place, and
 * `observed_at` tells the reader how old it is.
 */
interface NodeObserver extends Periodic {
  /** One sweep now (tests; and after drain/activate so the API shows the result without a wait). */
  observeOnce(): Promise<void>;
}

export function createNodeObserver(deps: {
  swarm: SwarmNodes;
  store: Pick<WorkerNodesStore, 'replaceSnapshot'>;
  leadership: Leadership;
  intervalMs: number;
  logger: Logger;
}): NodeObserver {
  const observeOnce = async () => {
    const { nodes, tasks } = await deps.swarm.observe();
    await deps.store.replaceSnapshot(nodes, tasks, new Date());
  };
  const periodic = createPeriodic(
    'node observer',
    deps.intervalMs,
    async () => {
      if (await deps.leadership.isLeader()) await observeOnce();
    },
    deps.logger,
  );
  return { ...periodic, observeOnce };
}
