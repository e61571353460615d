import type { Plan } from '@hostctl/compose';
import type { DeployLog } from '../pipeline/deploy-log.js';

/**
 * What runs a service's plan, shaped around what every driver does rather than around single
 * containers: bring a release up (replacing the one that runs), observe it, tear it down.
 * Drivers: the single Docker engine (docker-service-runtime.ts, the release engine's container
 * sets) and Swarm (swarm-runtime.ts, one Swarm service per component). Production calls only the
 * Swarm driver through it (RUNTIME=swarm); under RUNTIME=docker the pipeline, processors and
 * reconciler call the release engine and ContainerRuntime directly, and the docker driver runs in
 * its contract test (issue 28 makes one driver, chosen at start, the only path).
 */
export interface Release {
  serviceId: string;
  deploymentId: string;
  plan: Plan;
}

export interface TaskObservation {
  id: string;
  /** The node (hostname) the task runs on; the single engine's own name for the docker driver. */
  node: string;
  /** running, starting, failed, rejected, shutdown, … (Swarm's task states; containers map onto them). */
  state: string;
  desiredState: 'running' | 'shutdown';
  /** The deployment whose definition the task runs: during an update, old and new tasks differ. */
  deploymentId?: string;
  /** Swarm: when a running task started running (epoch ms), which tells how long it has been watched. */
  runningSince?: number;
  /** Why the task failed or was rejected (e.g. the image could not be pulled on its node). */
  error?: string;
  /**
   * Where the proxy reaches a running task of the plan's web component: the container's address
   * and web port (single engine), or its node's address and the port Swarm published there.
   */
  endpoint?: { host: string; port: number };
}

export interface ComponentObservation {
  component: string;
  /** The deployment whose definition the component runs now (after a rollback: the previous one). */
  deploymentId: string;
  desiredReplicas: number;
  runningReplicas: number;
  /**
   * Swarm: a standby, the serving release's web component held while Swarm updates it
   * (swarm-standby.ts). Not a component of any plan: only its endpoints count, while it runs.
   */
  standby?: true;
  /** Swarm's UpdateStatus of the last update (absent: never updated, or the docker driver). */
  update?: { state: string; message?: string };
  tasks: TaskObservation[];
}

export interface BroughtUp {
  /** What this driver cannot honour from the plan, for the deployment's validation warnings. */
  warnings: string[];
}

export interface ServiceRuntime {
  /** Warnings for the plan without running anything (shown when a deployment is validated). */
  warnings(plan: Plan): string[];
  /**
   * Brings the release up, or replaces the service's running release with it (the plan's update
   * order; the previous one keeps serving when the new one fails). Resolves once every component
   * runs its desired replicas of this release. Rejects with a DomainError: image_unavailable when
   * an image cannot be pulled; a PermanentStepError when the release did not come up (and, for an
   * update, was rolled back: the message says so and names the failed task).
   */
  up(release: Release, log: DeployLog, signal?: AbortSignal): Promise<BroughtUp>;
  /** The service's components as they run now; [] when nothing runs. */
  observe(serviceId: string): Promise<ComponentObservation[]>;
  /** Where the proxy reaches the running tasks of the release's web component; [] when none runs. */
  webEndpoints(release: Release): Promise<{ host: string; port: number }[]>;
  /** Removes everything of the service: its components, networks, volumes (and secrets). Idempotent. */
  tearDown(serviceId: string): Promise<void>;
}

/** The endpoints of the running tasks of one component of one deployment. */
export function endpointsOf(
  components: ComponentObservation[],
  component: string,
  deploymentId: string,
): { host: string; port: number }[] {
  return components
    .filter((item) => !item.standby && item.component === component && item.deploymentId === deploymentId)
    .flatMap((item) => item.tasks)
    .flatMap((task) =>
      task.desiredState === 'running' && task.state === 'running' && task.endpoint ? [task.endpoint] : [],
    );
}

/**
 * The endpoints of every running task of the web component, whichever release it belongs to: where
 * the proxy may send traffic while Swarm replaces the tasks, old and new alike. Only the web
 * component publishes a port, so only its tasks have endpoints.
 */
export function runningWebEndpoints(components: ComponentObservation[]): { host: string; port: number }[] {
  return components
    .flatMap((item) => item.tasks)
    .flatMap((task) => (task.state === 'running' && task.endpoint ? [task.endpoint] : []));
}
