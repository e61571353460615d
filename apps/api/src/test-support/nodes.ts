import { randomUUID } from 'node:crypto';
import type { Db } from '@hostctl/db';

/**
 * A node row as the worker's node observer would write it, with one task per given service, so
 * API tests exercise the nodes routes and service placement without a swarm (the worker's
 * swarm tests cover the observer against a real one). Unique engine ids and hostnames per call.
 */
export async function insertNode(
  db: Db,
  options: { instance: string; serviceIds?: string[]; hostname?: string; role?: 'manager' | 'worker' },
) {
  const suffix = randomUUID().slice(0, 8);
  return db.node.create({
    data: {
      engineId: `engine${suffix}`,
      hostname: options.hostname ?? `node-${suffix}`,
      role: options.role ?? 'worker',
      state: 'ready',
      availability: 'active',
      address: '10.213.0.2',
      engineVersion: '20.10.24',
      nanoCpus: 2_000_000_000n,
      memoryBytes: 4n * 1024n * 1024n * 1024n,
      labels: { zone: 'a' },
      observedAt: new Date(),
      tasks: {
        create: (options.serviceIds ?? []).map((serviceId, index) => ({
          id: `task${suffix}${index}`,
          instance: options.instance,
          serviceId,
          component: 'web',
          slot: index + 1,
          state: 'running',
          desiredState: 'running',
          message: 'started',
          updatedAt: new Date(),
        })),
      },
    },
    include: { tasks: true },
  });
}
