import type { Db } from '../client.js';
import type { Node, NodeTask, Prisma } from '../generated/client.ts';

/**
 * Swarm nodes and where tasks run. Nodes are platform-wide (no customer owns one), so the API
 * side reads them without a CustomerScope and the nodes service refuses customer-scoped callers
 * instead; a service's placement is read only after the service itself passed the scope check.
 * The worker's node observer is the only writer of the snapshot; the API only records a request
 * for another availability (docs/multi-host.md#nodes-api).
 */
export type NodeAvailabilityRequest = 'active' | 'drain';

export interface ObservedNode {
  engineId: string;
  hostname: string;
  role: 'manager' | 'worker';
  state: string;
  availability: 'active' | 'pause' | 'drain';
  address: string;
  engineVersion: string;
  nanoCpus: bigint;
  memoryBytes: bigint;
  labels: Record<string, string>;
}

export interface ObservedTask {
  id: string;
  nodeEngineId: string;
  serviceId: string;
  component: string | null;
  slot: number | null;
  state: string;
  desiredState: string;
  message: string;
  updatedAt: Date;
}

export type NodeWithTasks = Node & { tasks: NodeTask[] };
export type ServicePlacementRow = NodeTask & { node: Pick<Node, 'id' | 'hostname' | 'engineId'> };

const byHostname = { hostname: 'asc' } as const;

/** `instance` is the installation's QUEUE_PREFIX: its tasks only, never another installation's. */
export function createNodesStore(db: Db, instance: string) {
  const tasks = {
    where: { instance },
    orderBy: [{ serviceId: 'asc' }, { component: 'asc' }, { slot: 'asc' }, { id: 'asc' }],
  } satisfies Prisma.NodeTaskFindManyArgs;
  return {
    async list(): Promise<NodeWithTasks[]> {
      return db.node.findMany({ orderBy: byHostname, include: { tasks } });
    },

    async find(id: string): Promise<NodeWithTasks | null> {
      return db.node.findUnique({ where: { id }, include: { tasks } });
    },

    /**
     * Records what an operator asked for; the worker applies it. Returns the node, or null when
     * there is no such node. The last request wins; a previous failure is forgotten.
     */
    async requestAvailability(id: string, availability: NodeAvailabilityRequest) {
      const { count } = await db.node.updateMany({
        where: { id },
        data: { requestedAvailability: availability, availabilityError: null },
      });
      return count === 1 ? this.find(id) : null;
    },

    /** The tasks of one service that are meant to run or still do, with their nodes. */
    async placementOf(serviceId: string): Promise<ServicePlacementRow[]> {
      return db.nodeTask.findMany({
        where: { instance, serviceId, OR: [{ desiredState: 'running' }, { state: 'running' }] },
        include: { node: { select: { id: true, hostname: true, engineId: true } } },
        orderBy: [{ component: 'asc' }, { slot: 'asc' }, { id: 'asc' }],
      });
    },
  };
}
export type NodesStore = ReturnType<typeof createNodesStore>;

/** The worker's side: replace the snapshot, and apply requested availabilities. */
export function createWorkerNodesStore(db: Db, instance: string) {
  return {
    /**
     * Replaces the snapshot in one transaction: nodes the swarm no longer knows are removed with
     * their tasks; a node keeps its id (and any pending request) across observations; this
     * installation's tasks are replaced, other installations' are left alone.
     */
    async replaceSnapshot(nodes: ObservedNode[], tasks: ObservedTask[], observedAt: Date): Promise<void> {
      await db.$transaction(async (tx) => {
        const ids = new Map<string, string>();
        for (const node of nodes) {
          const data = { ...node, labels: node.labels as Prisma.InputJsonObject, observedAt };
          const row = await tx.node.upsert({
            where: { engineId: node.engineId },
            create: data,
            update: data,
            select: { id: true },
          });
          ids.set(node.engineId, row.id);
        }
        await tx.node.deleteMany({ where: { engineId: { notIn: [...ids.keys()] } } });
        await tx.nodeTask.deleteMany({ where: { instance } });
        const rows = tasks.flatMap(({ nodeEngineId, ...task }) => {
          const nodeId = ids.get(nodeEngineId);
          return nodeId ? [{ ...task, nodeId, instance }] : [];
        });
        if (rows.length > 0) await tx.nodeTask.createMany({ data: rows });
      });
    },

    async pendingRequest(id: string) {
      return db.node.findUnique({
        where: { id },
        select: { engineId: true, requestedAvailability: true },
      });
    },

    /**
     * Clears the request once applied, unless another request arrived meanwhile (that one has its
     * own job). The observed availability is written at once so the API does not wait a sweep.
     */
    async markApplied(id: string, applied: NodeAvailabilityRequest): Promise<void> {
      await db.node.updateMany({
        where: { id, requestedAvailability: applied },
        data: { requestedAvailability: null, availabilityError: null, availability: applied },
      });
    },

    async markFailed(id: string, requested: NodeAvailabilityRequest, error: string): Promise<void> {
      await db.node.updateMany({
        where: { id, requestedAvailability: requested },
        data: { requestedAvailability: null, availabilityError: error },
      });
    },
  };
}
export type WorkerNodesStore = ReturnType<typeof createWorkerNodesStore>;
