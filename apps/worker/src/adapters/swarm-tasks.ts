import type Docker from 'dockerode';
import { COMPONENT_LABEL, DEPLOYMENT_LABEL, STANDBY_LABEL } from '@hostctl/domain';
import type { PlanContainer } from '@hostctl/compose';
import type { ComponentObservation, TaskObservation } from '../runtime/driver.js';

/**
 * Reading how Swarm fared (pure, so each verdict is unit-tested): a Swarm service's UpdateStatus and
 * its tasks. The fields read of a task (dockerode leaves tasks untyped).
 */
export interface SwarmTask {
  ID: string;
  NodeID?: string;
  Slot?: number;
  DesiredState?: string;
  Spec?: { ContainerSpec?: { Labels?: Record<string, string>; HealthCheck?: { Test?: string[] } } };
  Status?: {
    State?: string;
    /** When the task entered its state (for a running task: since when it runs). */
    Timestamp?: string;
    Err?: string;
    Message?: string;
    ContainerStatus?: { ContainerID?: string; ExitCode?: number };
    PortStatus?: { Ports?: { TargetPort?: number; PublishedPort?: number; PublishMode?: string }[] };
  };
}

/** A node as the observations need it: its name, and the address its published ports answer on. */
export interface SwarmNodeInfo {
  hostname: string;
  address: string;
}

/** A node as Docker's node API returns it, reduced to SwarmNodeInfo (its id when it has no hostname). */
export function nodeInfoOf(node: {
  ID: string;
  Description?: { Hostname?: string };
  Status?: { Addr?: string };
}): SwarmNodeInfo {
  return { hostname: node.Description?.Hostname ?? node.ID, address: node.Status?.Addr ?? '' };
}

/** The fields read of a Swarm service (dockerode's type merges them with its handle class). */
export type SwarmService = Pick<Docker.Service, 'ID' | 'Spec' | 'UpdateStatus'>;

/** UpdateStatus states in which Swarm is replacing the service's tasks itself. */
const REPLACING = new Set(['updating', 'rollback_started']);

/** Whether the Swarm service is a standby (swarm-standby.ts) rather than a component of the plan. */
export const isStandby = (service: SwarmService) => service.Spec?.Labels?.[STANDBY_LABEL] === 'true';

/** Swarm is replacing the service's tasks: an update, or its rollback, is under way. */
export const isReplacingTasks = (service: SwarmService) => REPLACING.has(service.UpdateStatus?.State ?? '');

export type Rollout =
  | { kind: 'done' }
  | { kind: 'pending'; detail: string }
  | { kind: 'failed'; detail: string }
  | { kind: 'image_unavailable'; detail: string };

const PULL_FAILURE =
  /no such image|manifest unknown|pull access denied|not found: manifest|failed to resolve reference/i;
const FAILED_STATES = new Set(['failed', 'rejected']);
/** A new component whose tasks keep failing does not converge by waiting: stop after so many. */
const FAILED_TASKS_LIMIT = 3;

export function rolloutOf(
  service: SwarmService,
  tasks: SwarmTask[],
  deploymentId: string,
  container: PlanContainer,
): Rollout {
  const ours = tasks.filter((task) => task.Spec?.ContainerSpec?.Labels?.[DEPLOYMENT_LABEL] === deploymentId);
  const failures = ours.filter((task) => FAILED_STATES.has(task.Status?.State ?? ''));
  const firstError = failures.map((task) => task.Status?.Err ?? task.Status?.Message).find(Boolean);
  const pullError = failures.map((task) => task.Status?.Err ?? '').find((error) => PULL_FAILURE.test(error));
  const update = service.UpdateStatus;
  if (update?.State) {
    // An update: Swarm decides, and rolls back by itself; wait for its verdict.
    const message = update.Message ? `: ${update.Message}` : '';
    switch (update.State) {
      case 'completed':
        break;
      case 'rollback_completed':
      case 'rollback_paused': {
        // Only a failure once the previous release runs again: the caller promises it serves.
        const restored = service.Spec?.Labels?.[DEPLOYMENT_LABEL] ?? '';
        const back = runningOf(tasks, restored).length;
        if (update.State === 'rollback_completed' && back < (service.Spec?.Mode?.Replicated?.Replicas ?? 1))
          return { kind: 'pending', detail: `rolled back; ${back} task(s) of the previous release running` };
        return pullError
          ? {
              kind: 'image_unavailable',
              detail: `a node could not pull the image (${pullError}); Swarm rolled back to the previous release`,
            }
          : {
              kind: 'failed',
              // Why the new tasks failed ("unhealthy container", "non-zero exit (3)"): by now
              // UpdateStatus only says "rollback completed".
              detail: `the update failed (${firstError ?? update.Message ?? 'no reason given'}); Swarm rolled back to the previous release`,
            };
      }
      case 'paused':
        return { kind: 'failed', detail: `Swarm paused the update${message}` };
      default:
        return { kind: 'pending', detail: `update ${update.State}${message}` };
    }
  }
  const running = runningOf(ours, deploymentId);
  const wanted = container.replicas ?? 1;
  if (running.length >= wanted && (!update?.State || update.State === 'completed')) return { kind: 'done' };
  if (!update?.State) {
    // A new component: nothing to roll back to, so failures are judged here.
    if (pullError)
      return { kind: 'image_unavailable', detail: `a node could not pull the image: ${pullError}` };
    if (failures.length > 0 && (container.restart === 'no' || failures.length >= FAILED_TASKS_LIMIT))
      return { kind: 'failed', detail: `its tasks failed: ${firstError ?? 'no reason given'}` };
  }
  const states = ours.map((task) => task.Status?.State ?? '?').join(', ');
  return { kind: 'pending', detail: `${running.length}/${wanted} running (tasks: ${states || 'none yet'})` };
}

/** The task id in an UpdateStatus message such as "update paused due to failure … of task <id>". */
export function failedTaskId(message: string | undefined): string | undefined {
  return /\btask ([a-z0-9]{25})\b/.exec(message ?? '')?.[1];
}

function runningOf(tasks: SwarmTask[], deploymentId: string): SwarmTask[] {
  return tasks.filter(
    (task) =>
      task.Spec?.ContainerSpec?.Labels?.[DEPLOYMENT_LABEL] === deploymentId &&
      task.DesiredState === 'running' &&
      task.Status?.State === 'running',
  );
}

export function observeComponent(
  service: SwarmService,
  tasks: SwarmTask[],
  nodes: Map<string, SwarmNodeInfo>,
): ComponentObservation {
  const labels = service.Spec?.Labels ?? {};
  const observed: TaskObservation[] = tasks.map((task) => {
    const node = nodes.get(task.NodeID ?? '');
    const published = task.Status?.PortStatus?.Ports?.find(
      (port) => port.PublishMode === 'host' && port.PublishedPort,
    );
    const deploymentId = task.Spec?.ContainerSpec?.Labels?.[DEPLOYMENT_LABEL];
    return {
      id: task.ID,
      node: node?.hostname ?? task.NodeID ?? '',
      state: task.Status?.State ?? 'unknown',
      desiredState: task.DesiredState === 'running' ? 'running' : 'shutdown',
      ...(deploymentId ? { deploymentId } : {}),
      ...(task.Status?.Err ? { error: task.Status.Err } : {}),
      ...(task.Status?.State === 'running' && task.Status.Timestamp
        ? { runningSince: Date.parse(task.Status.Timestamp) }
        : {}),
      ...(node && published?.PublishedPort && task.Status?.State === 'running'
        ? { endpoint: { host: node.address, port: published.PublishedPort } }
        : {}),
    };
  });
  return {
    component: labels[COMPONENT_LABEL] ?? service.Spec?.Name ?? service.ID,
    ...(isStandby(service) ? { standby: true as const } : {}),
    deploymentId: labels[DEPLOYMENT_LABEL] ?? '',
    desiredReplicas: service.Spec?.Mode?.Replicated?.Replicas ?? 0,
    runningReplicas: observed.filter((task) => task.desiredState === 'running' && task.state === 'running')
      .length,
    ...(service.UpdateStatus?.State
      ? {
          update: {
            state: service.UpdateStatus.State,
            ...(service.UpdateStatus.Message ? { message: service.UpdateStatus.Message } : {}),
          },
        }
      : {}),
    tasks: observed,
  };
}
