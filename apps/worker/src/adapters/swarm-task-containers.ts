import { COMPONENT_LABEL } from '@hostctl/domain';
import type { ContainerState, ContainerSummary, Labels } from './runtime.js';
import type { SwarmNodeInfo, SwarmTask } from './swarm-tasks.js';

/**
 * Swarm tasks seen as the containers the observers (log shipper, health monitor, resource
 * sampler) watch on a single engine: a task's id stands for its container, which may live on
 * another node and is reached only through the manager. Pure, so each mapping is unit-tested.
 */

/** Swarm's states before a task's container runs. */
const STARTING_STATES = new Set(['new', 'pending', 'assigned', 'accepted', 'preparing', 'ready', 'starting']);

/**
 * The tasks that count as the service's containers now: those Swarm wants running, and those
 * still running while Swarm replaces them (their last lines must still be shipped). Finished
 * tasks Swarm keeps as history are not containers any more: a restarted task is a new task.
 */
export function currentTasks(tasks: SwarmTask[], labels: Labels): SwarmTask[] {
  return tasks.filter((task) => {
    const own = task.Spec?.ContainerSpec?.Labels ?? {};
    if (!Object.entries(labels).every(([key, value]) => own[key] === value)) return false;
    return task.DesiredState === 'running' || task.Status?.State === 'running';
  });
}

function containerState(task: SwarmTask): string {
  const state = task.Status?.State ?? 'unknown';
  if (state === 'running') return 'running';
  return STARTING_STATES.has(state) ? 'created' : 'exited';
}

function nameOf(task: SwarmTask): string {
  const component = task.Spec?.ContainerSpec?.Labels?.[COMPONENT_LABEL] ?? 'task';
  return `${component}.${task.Slot ?? task.ID}`;
}

export function taskSummary(task: SwarmTask): ContainerSummary {
  return {
    id: task.ID,
    name: nameOf(task),
    labels: task.Spec?.ContainerSpec?.Labels ?? {},
    state: containerState(task),
  };
}

/**
 * A task as an inspected container. With a health check Swarm keeps the task `starting` until the
 * check passes and replaces it when it fails, so a running task with one is healthy. There is no
 * restart in place either: Swarm starts a new task instead.
 */
export function taskContainerState(task: SwarmTask, node: SwarmNodeInfo | undefined): ContainerState {
  const state = task.Status?.State ?? 'unknown';
  const test = task.Spec?.ContainerSpec?.HealthCheck?.Test ?? [];
  const hasHealthCheck = test.length > 0 && test[0] !== 'NONE';
  const published = (task.Status?.PortStatus?.Ports ?? []).flatMap((port) =>
    node?.address && port.PublishMode === 'host' && port.TargetPort && port.PublishedPort
      ? [{ containerPort: port.TargetPort, host: node.address, port: port.PublishedPort }]
      : [],
  );
  return {
    ...taskSummary(task),
    status: state,
    isRunning: state === 'running',
    isRestarting: false,
    exitCode: task.Status?.ContainerStatus?.ExitCode ?? 0,
    restartCount: 0,
    ...(hasHealthCheck && state === 'running' ? { health: 'healthy' as const } : {}),
    ...(hasHealthCheck && STARTING_STATES.has(state) ? { health: 'starting' as const } : {}),
    ...(published.length > 0 ? { published } : {}),
    ...(task.Status?.Err ? { error: task.Status.Err } : {}),
  };
}
