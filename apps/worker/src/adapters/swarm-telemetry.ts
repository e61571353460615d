import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { DomainError } from '@hostctl/domain';
import { createDockerClient, objectSegment } from './docker-client.js';
import { fail, statusOf } from './docker-errors.js';
import { createDockerTelemetry, followLogOptions, followOutput } from './docker-telemetry.js';
import type { ContainerRuntime, Labels } from './runtime.js';
import { currentTasks, taskContainerState, taskSummary } from './swarm-task-containers.js';
import { nodeInfoOf, type SwarmNodeInfo, type SwarmTask } from './swarm-tasks.js';
import type { ContainerTelemetry } from './telemetry.js';

/** What the observers read of the containers they watch: on a swarm, the tasks. */
export type ObservedContainers = Pick<ContainerRuntime, 'listContainers' | 'inspectContainer'>;

export interface SwarmObservation {
  containers: ObservedContainers;
  telemetry: ContainerTelemetry;
}

/**
 * The observers' view of a swarm, through its manager: tasks stand for containers (swarm-task-
 * containers.ts), output comes from the manager's task logs (which reach every node), and Docker's
 * container events, which a manager does not have for tasks, are replaced by polling the task list.
 * Usage samples, disk usage and health check output exist only on the engine running the
 * container: they are read for tasks on the manager's own node; elsewhere a sample is `null`.
 */
export function createSwarmObservation(options: { socketPath: string; pollMs?: number }): SwarmObservation {
  const docker = createDockerClient(options.socketPath);
  const local = createDockerTelemetry({ socketPath: options.socketPath });
  const pollMs = options.pollMs ?? 1000;

  const listTasks = async (labels: Labels): Promise<SwarmTask[]> =>
    currentTasks((await docker.listTasks().catch(fail('cannot list Swarm tasks'))) as SwarmTask[], labels);
  const inspectTask = async (taskId: string): Promise<SwarmTask | null> => {
    try {
      return (await docker.getTask(objectSegment(taskId, 'task')).inspect()) as SwarmTask;
    } catch (error) {
      if (statusOf(error) === 404) return null;
      throw error;
    }
  };
  const nodeOf = async (nodeId: string | undefined): Promise<SwarmNodeInfo | undefined> => {
    if (!nodeId) return undefined;
    const node = (await docker
      .getNode(objectSegment(nodeId, 'node'))
      .inspect()
      .catch(() => undefined)) as Parameters<typeof nodeInfoOf>[0] | undefined;
    return node ? nodeInfoOf(node) : undefined;
  };
  let ownNode: Promise<string> | undefined;
  const swarmInfo = async () =>
    (await docker.info().catch(fail('cannot read the swarm manager info'))) as {
      MemTotal?: number;
      Swarm?: { NodeID?: string; Cluster?: { ID?: string } };
    };
  /** The task's container when it runs on the manager's own engine (the only one reachable here). */
  const localContainer = async (taskId: string): Promise<string | undefined> => {
    ownNode ??= swarmInfo().then((info) => info.Swarm?.NodeID ?? '');
    const [task, nodeId] = await Promise.all([inspectTask(taskId), ownNode]);
    return task && task.NodeID === nodeId ? task.Status?.ContainerStatus?.ContainerID : undefined;
  };

  const containers: ObservedContainers = {
    listContainers: async (labels) => (await listTasks(labels)).map(taskSummary),
    async inspectContainer(taskId) {
      const task = await inspectTask(taskId);
      return task ? taskContainerState(task, await nodeOf(task.NodeID)) : null;
    },
  };

  const telemetry: ContainerTelemetry = {
    async engineInfo() {
      const info = await swarmInfo();
      const cluster = info.Swarm?.Cluster?.ID;
      if (!cluster) throw new DomainError('runtime_error', 'the engine is not a swarm manager');
      // One identity for the whole swarm: its manager ships every node's task output.
      return { id: `swarm-${cluster}`, memoryBytes: info.MemTotal ?? 0 };
    },

    async followLogs(taskId, { since, tail }, onChunk, signal) {
      // dockerode implements Task#logs (GET /tasks/{id}/logs) but its types leave it out.
      const task = docker.getTask(objectSegment(taskId, 'task')) as unknown as {
        logs(options: ReturnType<typeof followLogOptions>): Promise<Readable>;
      };
      const raw = await task
        .logs(followLogOptions({ since, tail }, signal))
        .catch(fail(`cannot follow the output of task ${taskId}`));
      return followOutput(docker, raw, onChunk, signal);
    },

    async watchEvents(labels, onEvent, signal) {
      let known: Map<string, { labels: Labels; isRunning: boolean }> | undefined;
      while (!signal.aborted) {
        const now = new Map(
          (await containers.listContainers(labels)).map((task) => [
            task.id,
            { labels: task.labels, isRunning: task.state === 'running' },
          ]),
        );
        // The first listing is the baseline: what runs already is the resync's to attach.
        for (const [containerId, task] of known ? now : []) {
          const before = known?.get(containerId);
          if (task.isRunning && !before?.isRunning)
            onEvent({ action: 'start', containerId, labels: task.labels });
          if (!task.isRunning && before?.isRunning)
            onEvent({ action: 'die', containerId, labels: task.labels });
        }
        for (const [containerId, task] of known ?? [])
          if (!now.has(containerId)) onEvent({ action: 'destroy', containerId, labels: task.labels });
        known = now;
        await sleep(pollMs, undefined, { signal }).catch(() => undefined);
      }
    },

    async sampleUsage(taskId) {
      const container = await localContainer(taskId);
      return container ? local.sampleUsage(container) : null;
    },

    diskUsage: () => local.diskUsage(),

    async lastHealthOutput(taskId) {
      const container = await localContainer(taskId).catch(() => undefined);
      return container ? local.lastHealthOutput(container) : undefined;
    },
  };

  return { containers, telemetry };
}
