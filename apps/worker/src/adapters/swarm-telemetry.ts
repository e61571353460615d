import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { DomainError } from '@hostctl/domain';
import { createDockerClient, objectSegment } from './docker-client.js';
import { fail } from './docker-errors.js';
import { createDockerTelemetry, followLogOptions, followOutput } from './docker-telemetry.js';
import type { ContainerRuntime, Labels } from './runtime.js';
import type { NodeEngines } from './swarm-node-engines.js';
import { currentTasks, taskContainerState, taskSummary } from './swarm-task-containers.js';
import { createTaskEngines, inspectTask, swarmNodeOf } from './swarm-task-engine.js';
import type { SwarmTask } from './swarm-tasks.js';
import type { ContainerTelemetry, DiskUsage } from './telemetry.js';

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
 * container: they are read from the manager's own engine for its tasks and from `nodeEngines`
 * (SWARM_NODE_ENGINES) for tasks on the nodes listed there; a task on any other node has no sample.
 */
export function createSwarmObservation(options: {
  socketPath: string;
  pollMs?: number;
  nodeEngines?: NodeEngines;
}): SwarmObservation {
  const docker = createDockerClient(options.socketPath);
  const local = createDockerTelemetry({ socketPath: options.socketPath });
  const nodeEngines: NodeEngines = options.nodeEngines ?? new Map();
  const pollMs = options.pollMs ?? 1000;

  const listTasks = async (labels: Labels): Promise<SwarmTask[]> =>
    currentTasks((await docker.listTasks().catch(fail('cannot list Swarm tasks'))) as SwarmTask[], labels);
  const swarmInfo = async () =>
    (await docker.info().catch(fail('cannot read the swarm manager info'))) as {
      MemTotal?: number;
      Swarm?: { Cluster?: { ID?: string } };
    };
  const engineOf = createTaskEngines(docker, local, nodeEngines);
  /** The task's container and the engine running it, when that engine is one the worker reaches. */
  const containerOf = async (
    taskId: string,
  ): Promise<{ engine: ContainerTelemetry; containerId: string } | undefined> => {
    const located = await engineOf(taskId);
    return located.found ? located : undefined;
  };

  const containers: ObservedContainers = {
    listContainers: async (labels) => (await listTasks(labels)).map(taskSummary),
    async inspectContainer(taskId) {
      const task = await inspectTask(docker, taskId);
      return task ? taskContainerState(task, await swarmNodeOf(docker, task.NodeID)) : null;
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

    // `timestamps` passed on: a run's live output (runs/live-output.ts) asks for none.
    async followLogs(taskId, { since, tail, timestamps }, onChunk, signal) {
      // dockerode implements Task#logs (GET /tasks/{id}/logs) but its types leave it out.
      const task = docker.getTask(objectSegment(taskId, 'task')) as unknown as {
        logs(options: ReturnType<typeof followLogOptions>): Promise<Readable>;
      };
      const raw = await task
        .logs(followLogOptions({ since, tail, ...(timestamps === undefined ? {} : { timestamps }) }, signal))
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
      const container = await containerOf(taskId);
      return container ? container.engine.sampleUsage(container.containerId) : null;
    },

    async diskUsage() {
      // An unreachable node's part is left out rather than failing the whole swarm's sample.
      const parts = await Promise.all([
        local.diskUsage(),
        ...[...nodeEngines.values()].map((engine) => engine.diskUsage().catch(() => NO_DISK_USAGE)),
      ]);
      return {
        volumes: parts.flatMap((part) => part.volumes),
        containers: parts.flatMap((part) => part.containers),
      };
    },

    async lastHealthOutput(taskId) {
      const container = await containerOf(taskId).catch(() => undefined);
      return container ? container.engine.lastHealthOutput(container.containerId) : undefined;
    },
  };

  return { containers, telemetry };
}

const NO_DISK_USAGE: DiskUsage = { volumes: [], containers: [] };
