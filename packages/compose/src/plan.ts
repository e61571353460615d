/**
 * A deploy plan: the normalised, policy-checked description of what one service runs. Every deploy
 * method (template, git, compose, ai) produces one; the worker executes only plans, never raw YAML.
 * Plans are stored as JSON on the deployment, so every field is plain data.
 */
export interface PlanVolumeMount {
  /** Name of a volume declared in Plan.volumes (named volumes only: host paths are refused). */
  volume: string;
  target: string;
  readOnly: boolean;
}

export interface PlanHealthcheck {
  /** Docker's form: ["CMD", ...], ["CMD-SHELL", "..."] or ["NONE"] (disables the image's check). */
  test: string[];
  intervalMs: number;
  timeoutMs: number;
  retries: number;
  startPeriodMs: number;
}

export type PlanRestartPolicy = 'no' | 'always' | 'unless-stopped' | 'on-failure';

export interface PlanContainer {
  /** The compose service key; a DNS label, also the container's alias on the service network. */
  name: string;
  /** Empty only while a build is pending: the build step tags the image and fills it in. */
  image: string;
  /** Set for git/ai builds: the build context inside the checked-out repository. */
  build?: { context: string; dockerfile: string };
  command?: string[];
  entrypoint?: string[];
  environment: Record<string, string>;
  workingDir?: string;
  user?: string;
  hostname?: string;
  labels: Record<string, string>;
  volumes: PlanVolumeMount[];
  /** Container ports the service listens on; the proxy routes to them, nothing is published on the host. */
  ports: number[];
  /** Services started (and, when they have a health check, healthy) before this one. */
  dependsOn: string[];
  healthcheck?: PlanHealthcheck;
  restart: PlanRestartPolicy;
  /** Only meaningful with restart `on-failure`. */
  restartMaxRetries?: number;
  /** Run an init as PID 1 so signals reach the process and stop does not wait out its timeout. */
  init: boolean;
  /** Always set by the parser: the compose's own limits, or the operator's defaults. */
  limits: { memoryBytes?: number; nanoCpus?: number; pids?: number };
  /**
   * deploy.update_config.order when the compose names one: whether a redeploy starts the new
   * container before stopping the old one. Absent: the worker's default (docs/worker.md).
   */
  updateOrder?: 'start-first' | 'stop-first';
  /**
   * deploy.replicas, placement and resources.reservations: honoured by the Swarm runtime only (the
   * single engine runs one container per component and warns). Absent: one replica, no placement,
   * no reservations.
   */
  replicas?: number;
  placement?: { constraints: string[]; preferences: string[] };
  reservations?: { memoryBytes?: number; nanoCpus?: number };
  /**
   * `services.<component>.x-hostctl.backup`: commands run in this component's running container
   * around a backup of the service's volumes (docs/backups.md#hooks), e.g. a database dump into a
   * file of its volume before the copy and its removal after.
   */
  backupHooks?: PlanBackupHooks;
}

export interface PlanBackupHooks {
  /** Runs before the copy; a non-zero exit or a timeout fails the backup. */
  pre?: string[];
  /** Runs after the copy, whether it succeeded or not. */
  post?: string[];
  /**
   * Runs in a short-lived container of the component's image on restored copies of its volumes
   * (a restore test, docs/backups.md#verification); exit 0 is a pass.
   */
  verify?: string[];
  /** How long each hook (and the verify command) may run. */
  timeoutSeconds: number;
}

export interface Plan {
  /** In document order; start them in dependency order (see startOrder). */
  containers: PlanContainer[];
  volumes: string[];
  /** Which container and port receive the service's public traffic, when any listens. */
  web?: { container: string; port: number };
  /**
   * `services.<component>.x-hostctl.release_command`: run once per deployment in a one-off
   * container of that component before the new release starts; a non-zero exit fails the
   * deployment and the previous release keeps serving (docs/jobs.md#release-command).
   */
  release?: { component: string; command: string[] };
}
