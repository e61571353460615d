import type { RegistryAuth } from './registry-auth.js';

/**
 * Containers, networks, volumes and images on one Docker engine (docker-runtime.ts): every
 * service object under RUNTIME=docker, and under RUNTIME=swarm the engine that pulls, builds and
 * checks images before they are pushed to the registry. Swarm services are driven through the
 * Swarm driver instead (runtime/swarm/). Objects are found by label, never by remembering ids: workers are
 * stateless.
 */
export type Labels = Record<string, string>;

export interface ContainerSpec {
  name: string;
  image: string;
  command?: string[];
  entrypoint?: string[];
  env: string[];
  workingDir?: string;
  user?: string;
  hostname?: string;
  labels: Labels;
  exposedPorts: number[];
  healthcheck?: {
    test: string[];
    intervalMs: number;
    timeoutMs: number;
    retries: number;
    startPeriodMs: number;
  };
  init: boolean;
  restart: { name: 'no' | 'always' | 'unless-stopped' | 'on-failure'; maxRetries?: number };
  /** Absent only in old callers: the runtime then applies DEFAULT_CONTAINER_LIMITS, never "unlimited". */
  memoryBytes?: number;
  nanoCpus?: number;
  pidsLimit?: number;
  mounts: { volume: string; target: string; readOnly: boolean }[];
  network: string;
  aliases: string[];
}

export interface ContainerSummary {
  id: string;
  name: string;
  labels: Labels;
  /** Docker's state: created, running, restarting, paused, exited, dead, removing. */
  state: string;
}

export interface ContainerState {
  id: string;
  name: string;
  labels: Labels;
  status: string;
  isRunning: boolean;
  isRestarting: boolean;
  exitCode: number;
  restartCount: number;
  /** The last exit was the kernel's out-of-memory kill (Docker's State.OOMKilled; absent: unknown). */
  oomKilled?: boolean;
  /** Only for containers with a health check. */
  health?: 'starting' | 'healthy' | 'unhealthy';
  /**
   * Only for containers with a health check: how many of its latest checks passed in a row (the
   * engine keeps the last 5 results, so never more than 5). The release engine's evidence that a
   * new release keeps working (release/set-watch.ts).
   */
  healthyStreak?: number;
  /** Address on the service network, when running. */
  ip?: string;
  /**
   * Where the host reaches the container's ports when `ip` is not routable from it (a Swarm task:
   * its overlay address lives on its node; the port published in host mode there is reachable).
   */
  published?: { containerPort: number; host: string; port: number }[];
  error?: string;
}

export interface ImageInfo {
  id: string;
  /** repo@sha256:… when the image came from a registry, else the image id. */
  digest: string;
}

export interface NamedObject {
  id: string;
  name: string;
  labels: Labels;
  /** Networks only: the Linux bridge interface behind the network. */
  bridge?: string;
}

export interface ContainerRuntime {
  ping(): Promise<void>;
  inspectImage(reference: string): Promise<ImageInfo | null>;
  /** Pulls and reports progress lines; rejects with image_unavailable when the registry has no such image. */
  pullImage(reference: string, onProgress: (line: string) => void, signal?: AbortSignal): Promise<void>;
  /**
   * Tags a local image as `repository:tag` and pushes it there; resolves with the pushed
   * `repository@sha256:…`, the reference every node pulls the same image by. Rejects with
   * image_unavailable when the local image does not exist. `auth`: the registry's credentials.
   */
  pushImage(
    source: string,
    target: { repository: string; tag: string; auth?: RegistryAuth },
    signal?: AbortSignal,
  ): Promise<string>;
  /**
   * `bridge` names the Linux bridge interface (the egress policy matches tenant bridges by name).
   * An existing network is kept as it is.
   */
  ensureNetwork(name: string, labels: Labels, options?: { bridge?: string }): Promise<void>;
  ensureVolume(name: string, labels: Labels): Promise<void>;
  /** Every container (running or not) carrying all the given labels. */
  listContainers(labels: Labels): Promise<ContainerSummary[]>;
  createContainer(spec: ContainerSpec): Promise<string>;
  inspectContainer(idOrName: string): Promise<ContainerState | null>;
  startContainer(id: string): Promise<void>;
  stopContainer(id: string, timeoutSeconds: number): Promise<void>;
  restartContainer(id: string, timeoutSeconds: number): Promise<void>;
  /** Force-removes; an already-gone container is success. */
  removeContainer(id: string): Promise<void>;
  /** The last lines of a container's output, for error messages. */
  containerLogs(id: string, tail: number): Promise<string>;
  listNetworks(labels: Labels): Promise<NamedObject[]>;
  removeNetwork(id: string): Promise<void>;
  listVolumes(labels: Labels): Promise<NamedObject[]>;
  removeVolume(name: string): Promise<void>;
  /** Images carrying all the given labels (the ones built for git/ai services). */
  listImages(labels: Labels): Promise<NamedObject[]>;
  /** Force-removes; an already-gone image is success. */
  removeImage(id: string): Promise<void>;
}
