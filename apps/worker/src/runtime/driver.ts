import type { Plan } from '@hostctl/compose';
import type { LifecycleAction } from '@hostctl/domain';
import type { AdvisoryLocks, WorkerDeployment, WorkerDeploymentStore, WorkerServiceStore } from '@hostctl/db';
import type { Logger } from 'pino';
import type { ExecResult } from '../adapters/container-exec.js';
import type { ContainerRuntime } from '../adapters/runtime.js';
import type { ContainerTelemetry } from '../adapters/telemetry.js';
import type { TerminalExec } from '../adapters/terminal-exec.js';
import type { LiveOutput } from '../runs/live-output.js';
import type { DeployLog } from '../pipeline/deploy-log.js';
import type { CurrentRelease, ReleaseStep, ServiceRef } from '../release/release-engine.js';
import type { UpdateOrder } from '../release/update-order.js';
import type { Continuation } from '../release/release-waiting.js';

/**
 * What runs a service's plan, shaped around what every runtime does rather than around single
 * containers. `ServiceRuntime` is the core every driver shares (bring a release up, observe it,
 * tear it down: the contract suite, testing/service-runtime-contract.ts); `RuntimeDriver` adds
 * what the rest of the worker needs from a runtime (the deploy's release phase, lifecycle actions,
 * repair, telemetry, what it refuses). Two drivers: the single Docker engine (runtime/docker/,
 * the release engine's container sets) and Swarm (runtime/swarm/, one Swarm service per
 * component). The composition root picks one from RUNTIME (runtime/runtime-wiring.ts); nothing
 * else asks which one it has (runtime/no-runtime-branches.test.ts keeps it so).
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
  tearDown(serviceId: string): Promise<unknown>;
}

/** The deploy's release phase, once the plan is prepared and its images are present. */
export interface BringUpRun {
  service: ServiceRef;
  deploymentId: string;
  /** The plan as it runs (a rollback's images pinned). */
  plan: Plan;
  /** The release serving now (`serving`), to replace. */
  previous: CurrentRelease | undefined;
  log: DeployLog;
  signal: AbortSignal;
  checkpoint: (step: ReleaseStep) => Promise<void>;
  /** Records the update order the release is brought up in (single engine). */
  onOrder: (order: UpdateOrder) => Promise<void>;
  /** Whether a failure ends the deployment (else the job is retried and resumes). */
  isFinal: (error: unknown) => boolean;
  /**
   * The single engine's windows pause instead of holding the job (release/release-waiting.ts);
   * Swarm watches its update itself and ignores it.
   */
  continuation?: Continuation;
}

/** Work beside the release sets that a runtime may not support yet (docs/jobs.md, docs/backups.md). */
export type OneOffWork = 'run' | 'release-command' | 'backup' | 'restore';

/**
 * Where a terminal opens (docs/jobs.md#terminal): a running container of a component (under Swarm
 * a running task's, on whichever node runs it), never a standby's or a run's, and the exec with a
 * TTY in it. Both reject with a TerminalUnavailable saying why when there is none to open in.
 */
export interface Terminals extends TerminalExec {
  /** The container a terminal of the component opens in: an id for `open`, a name for the audit. */
  find(serviceId: string, component: string): Promise<{ id: string; name: string }>;
}

/** A command run once in a short-lived task of one component (runs/, docs/jobs.md). */
export interface OneOffJob {
  serviceId: string;
  /** The release whose definition the command runs with (its plan, images pinned). */
  releaseId: string;
  plan: Plan;
  /** A component of the plan; absent: the web component, else the first. */
  component?: string | null;
  command: string[];
  /**
   * The release whose network the command joins, where its components answer by name: the one
   * serving (a release command's migration reaches the database that runs now). One network per
   * service under Swarm, so only the single engine reads it.
   */
  networkOf: string;
  /** Names the container (or Swarm job) and labels it (RUN_LABEL). */
  runId: string;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Masks secret values from the output before it is bounded and kept. */
  redact: (text: string) => string;
  /** Streams the output while the command runs (masked there too); absent: read at the end only. */
  live?: Pick<LiveOutput, 'attach' | 'drain'>;
}

export interface OneOffResult {
  exitCode: number | null;
  timedOut: boolean;
  output: string;
  outputTruncated: boolean;
}

/** How one runtime's broken services are found and brought back (service-restorer.ts). */
export interface RestoreTarget {
  /** Of the running services, those worth examining under their lock (one cheap listing). */
  suspects(running: string[]): Promise<string[]>;
  /** Why the current release does not run as planned, or undefined when it does. */
  problem(
    serviceId: string,
    currentRelease: string | undefined,
    plan: Plan | undefined,
  ): Promise<string | undefined>;
  restore(service: ServiceRef, plan: Plan, deploymentId: string): Promise<void>;
}

/** What the reconciler lends a driver to sweep leftovers under the services' locks. */
export interface LeftoverDeps {
  locks: AdvisoryLocks;
  deployments: Pick<WorkerDeploymentStore, 'lastSucceeded' | 'inFlightIds'>;
  services: Pick<WorkerServiceStore, 'listLiveIds'>;
  logger: Logger;
}

/** Where the observers (health, resources) read what runs and what it uses. */
export interface ObservedRuntime {
  containers: Pick<ContainerRuntime, 'listContainers' | 'inspectContainer'>;
  telemetry: ContainerTelemetry;
}

/**
 * One runtime, chosen once at start. Every method keeps the outcome the deploy, lifecycle, delete
 * and repair paths promise on either runtime; the differences live behind it.
 */
export interface RuntimeDriver extends ServiceRuntime {
  /**
   * Removes everything of the service (its route too) and returns how many objects of this
   * engine went; throws, to be retried, while anything remains. Idempotent.
   */
  tearDown(serviceId: string): Promise<number>;
  /** The release that serves now, when any of it runs (a new release replaces it). */
  serving(serviceId: string, last: WorkerDeployment | null): Promise<CurrentRelease | undefined>;
  /** Whether that release still serves, all of it running (after a new one failed). */
  isServing(serviceId: string, release: CurrentRelease): Promise<boolean>;
  /**
   * The deploy's release phase: brings the release up and routes it (checkpoints, the update
   * order, stabilise, drain). A final failure is a ReleaseUndone saying whether the release had
   * taken traffic and which release still serves.
   */
  bringUp(run: BringUpRun): Promise<{ webIp?: string }>;
  /** The plan's release command, before anything of the new release exists (runs/release-command.ts). */
  runReleaseCommand(
    run: { serviceId: string; deploymentId: string; log: DeployLog; signal: AbortSignal },
    previous: CurrentRelease | undefined,
    plan: Plan & { release: NonNullable<Plan['release']> },
  ): Promise<void>;
  /**
   * Runs a command once (a one-off run, a scheduled job's run, a release command) in a task that is
   * the component's own in all but its command, and removes that task whatever happens. Rejects
   * when the command could not be started (no such component, image gone, task rejected).
   */
  runOnce(job: OneOffJob): Promise<OneOffResult>;
  /** Removes what a run left when its worker stopped mid-run (its container or job); idempotent. */
  removeRunLeftovers(runId: string): Promise<void>;
  /** Where a run's output is followed while it runs: the id runOnce hands to `live.attach`. */
  runOutput: Pick<ContainerTelemetry, 'followLogs'>;
  /**
   * start/stop/restart of the service's current release (`last`), the route following the new
   * tasks; a release removed behind our back is recreated from its plan.
   */
  lifecycle(service: ServiceRef, action: LifecycleAction, last: WorkerDeployment | null): Promise<void>;
  /** How the reconciler finds and repairs running services that do not run as planned. */
  restoreTarget: RestoreTarget;
  /** Removes what dead releases left beside the current one (stray sets, standbys); how many. */
  sweepLeftovers(deps: LeftoverDeps): Promise<number>;
  /** Why this runtime refuses `work` for now (the message the run or deployment fails with), or undefined. */
  refusal(work: OneOffWork): string | undefined;
  /**
   * Runs `argv` (no shell) in the running container of one component of the service, the given
   * release's when it runs (a backup's hooks, backups/backup-hooks.ts). Rejects with a
   * PermanentStepError when no container of the component runs, or when the runtime cannot.
   */
  execInComponent(
    target: { serviceId: string; deploymentId: string; component: string },
    argv: string[],
    options: { timeoutMs: number },
  ): Promise<ExecResult>;
  terminals: Terminals;
  observed: ObservedRuntime;
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
