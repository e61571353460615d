// The drain/activate processor's refusals against real PostgreSQL and a real engine that is not
// a swarm manager (the dev engine: every node call fails there, and nothing on it changes). The
// successful path runs against a real two-node swarm in two-node.swarm.test.ts.
import { randomUUID } from 'node:crypto';
import type { Job } from 'bullmq';
import Docker from 'dockerode';
import { afterAll, describe, expect, it } from 'vitest';
import { createWorkerNodesStore, type Db } from '@hostctl/db';
import type { JobPayload } from '@hostctl/queue';
import { createSwarmNodes } from '../adapters/swarm-nodes.js';
import { createTestDb, silentLogger, uniquePrefix } from '../testing/fixtures.js';
import { createNodeAvailabilityProcessor } from './node-availability.processor.js';

const instance = uniquePrefix('node-availability');
const db: Db = createTestDb();
let refreshes = 0;
const created: string[] = [];

afterAll(async () => {
  await db.node.deleteMany({ where: { id: { in: created } } });
  await db.$disconnect();
});

async function nodeRow(requested: 'active' | 'drain' | null, engineId = `engine${randomUUID().slice(0, 8)}`) {
  const node = await db.node.create({
    data: {
      engineId,
      hostname: `node-${randomUUID().slice(0, 8)}`,
      role: 'worker',
      state: 'ready',
      availability: 'active',
      requestedAvailability: requested,
      address: '10.0.0.2',
      engineVersion: '20.10.24',
      nanoCpus: 1_000_000_000n,
      memoryBytes: 1024n,
      observedAt: new Date(),
    },
  });
  created.push(node.id);
  return node;
}

const processor = createNodeAvailabilityProcessor({
  swarm: createSwarmNodes(
    new Docker({ socketPath: process.env.DOCKER_SOCKET ?? '/var/run/docker.sock' }),
    instance,
  ),
  store: createWorkerNodesStore(db, instance),
  refresh: async () => void (refreshes += 1),
  logger: silentLogger,
});
const job = (nodeId: string, attemptsMade: number) =>
  ({ data: { nodeId }, attemptsMade, opts: { attempts: 3 } }) as Job<JobPayload<'node-availability'>>;

describe('node-availability processor', () => {
  it('retries while attempts remain, then stores the engine’s refusal on the node', async () => {
    const node = await nodeRow('drain');
    await expect(processor(job(node.id, 0))).rejects.toThrow(/setting node|inspecting node/);
    expect(await db.node.findUniqueOrThrow({ where: { id: node.id } })).toMatchObject({
      requestedAvailability: 'drain',
      availabilityError: null,
    });
    await expect(processor(job(node.id, 2))).rejects.toThrow();
    const failed = await db.node.findUniqueOrThrow({ where: { id: node.id } });
    expect(failed.requestedAvailability).toBeNull();
    expect(failed.availabilityError).toMatch(/node/);
    expect(failed.availability).toBe('active');
  });

  it('does nothing for a node without a request, or no longer known', async () => {
    const before = refreshes;
    const idle = await nodeRow(null);
    await expect(processor(job(idle.id, 0))).resolves.toBeUndefined();
    await expect(processor(job(randomUUID(), 0))).resolves.toBeUndefined();
    expect(refreshes).toBe(before);
  });

  it('refuses an engine node id that is not a Docker name before any call', async () => {
    const node = await nodeRow('drain', '../../swarm/leave');
    await expect(processor(job(node.id, 2))).rejects.toThrow(/not a Docker name/);
    expect((await db.node.findUniqueOrThrow({ where: { id: node.id } })).availabilityError).toMatch(
      /not a Docker name/,
    );
  });
});
