import type Docker from 'dockerode';
import { objectSegment } from './docker-client.js';
import { fail, statusOf } from './docker-errors.js';
import { nodeInfoOf, type SwarmNodeInfo, type SwarmTask } from './swarm-tasks.js';

/**
 * Where a task's container lives, for what only the engine running it can do (a usage sample, a
 * health check's output, an exec): the container's id and that engine, or why the worker cannot
 * reach it. `engine` is the node's engine as the caller holds it (a telemetry client, an exec).
 */
type TaskEngine<T> =
  | { found: true; task: SwarmTask; containerId: string; engine: T }
  | { found: false; task: SwarmTask | null; reason: string };

/**
 * Finds the engine of a task's node: the manager's own (`local`) for a task on the manager's node,
 * else the one SWARM_NODE_ENGINES lists for the node's hostname (`nodes`). A manager knows every
 * task but holds the containers of its own node only.
 */
export function createTaskEngines<T>(
  docker: Docker,
  local: T,
  nodes: ReadonlyMap<string, T>,
): (taskId: string) => Promise<TaskEngine<T>> {
  let ownNode: Promise<string> | undefined;
  const managerNode = () =>
    (ownNode ??= (docker.info() as Promise<{ Swarm?: { NodeID?: string } }>)
      .then((info) => info.Swarm?.NodeID ?? '')
      .catch((error: unknown) => {
        ownNode = undefined;
        return fail('cannot read the swarm manager info')(error);
      }));
  return async (taskId) => {
    const [task, ownNodeId] = await Promise.all([inspectTask(docker, taskId), managerNode()]);
    if (!task) return { found: false, task, reason: `task ${taskId} is gone` };
    const containerId = task.Status?.ContainerStatus?.ContainerID;
    if (!containerId || !task.NodeID)
      return { found: false, task, reason: `task ${taskId} has no container (${task.Status?.State ?? '?'})` };
    if (task.NodeID === ownNodeId) return { found: true, task, containerId, engine: local };
    const hostname = (await swarmNodeOf(docker, task.NodeID))?.hostname ?? task.NodeID;
    const engine = nodes.get(hostname);
    return engine
      ? { found: true, task, containerId, engine }
      : {
          found: false,
          task,
          reason: `task ${taskId} runs on node ${hostname}, whose engine is not in SWARM_NODE_ENGINES`,
        };
  };
}

/** The task as the manager has it; null when Swarm has no such task (any more). */
export async function inspectTask(docker: Docker, taskId: string): Promise<SwarmTask | null> {
  try {
    return (await docker.getTask(objectSegment(taskId, 'task')).inspect()) as SwarmTask;
  } catch (error) {
    if (statusOf(error) === 404) return null;
    throw error;
  }
}

/** A node's hostname and address; undefined when the manager cannot say (a node just removed). */
export async function swarmNodeOf(
  docker: Docker,
  nodeId: string | undefined,
): Promise<SwarmNodeInfo | undefined> {
  if (!nodeId) return undefined;
  const node = (await docker
    .getNode(objectSegment(nodeId, 'node'))
    .inspect()
    .catch(() => undefined)) as Parameters<typeof nodeInfoOf>[0] | undefined;
  return node ? nodeInfoOf(node) : undefined;
}
