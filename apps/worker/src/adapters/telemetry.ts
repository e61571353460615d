import type { Labels } from './runtime.js';

/**
 * What the worker observes on the container engine besides driving it: container output, engine
 * events, resource usage and disk usage. Kept apart from ContainerRuntime so fakes of the runtime
 * stay small; the Docker implementation is docker-telemetry.ts.
 */
export interface EngineInfo {
  /** Stable identity of the engine (Docker's `info().ID`): the key of per-host leases. */
  id: string;
  /** Host memory; a container "limit" at or above it means the container has no limit. */
  memoryBytes: number;
}

export type OutputStream = 'stdout' | 'stderr';

export interface LogFollowOptions {
  /** Only output at or after this instant, as Docker takes it: `<unix seconds>.<nanoseconds>`. */
  since?: string;
  /** At most this many of the most recent lines (of those after `since`). */
  tail?: number;
  /** Docker's timestamp before every line; default true (the log shipper's cursor needs it). */
  timestamps?: boolean;
}

export interface LogFollow {
  /** Settles when the output ends (the container stopped, or the signal aborted). */
  done: Promise<void>;
  /** Stops reading from the engine (backpressure); resume() continues. */
  pause(): void;
  resume(): void;
}

export interface ContainerEvent {
  action: 'start' | 'die' | 'destroy';
  containerId: string;
  labels: Labels;
}

export interface ContainerUsage {
  /**
   * Percent of one CPU (200 = two full CPUs) since this engine's previous sample of the container
   * (cpu-readings.ts); 0 at its first sample.
   */
  cpuPercent: number;
  /** Working set: usage minus reclaimable page cache, as `docker stats` shows it. */
  memoryBytes: number;
  /** Infinity when the container has no limit (Docker reports the host's memory then). */
  memoryLimitBytes: number;
  /**
   * Bytes received and sent over all the container's networks since its network namespace was
   * made (counters: they start again at 0 when the container restarts).
   */
  networkRxBytes: number;
  networkTxBytes: number;
}

export interface DiskUsage {
  volumes: { name: string; labels: Labels; sizeBytes: number }[];
  /** Writable layers of containers. */
  containers: { id: string; labels: Labels; sizeBytes: number }[];
}

export interface ContainerTelemetry {
  engineInfo(): Promise<EngineInfo>;
  /**
   * Follows a container's output with Docker timestamps; each chunk is raw output of one stream,
   * every line prefixed with its RFC 3339 timestamp and a space.
   */
  followLogs(
    containerId: string,
    options: LogFollowOptions,
    onChunk: (stream: OutputStream, chunk: Buffer) => void,
    signal: AbortSignal,
  ): Promise<LogFollow>;
  /** Container start/die/destroy events of containers carrying all `labels`, until the signal aborts. */
  watchEvents(labels: Labels, onEvent: (event: ContainerEvent) => void, signal: AbortSignal): Promise<void>;
  /** One usage sample (Docker's next collection, within a second); null when the container is gone. */
  sampleUsage(containerId: string): Promise<ContainerUsage | null>;
  diskUsage(): Promise<DiskUsage>;
  /** Output of the container's most recent health check run, when it has one. */
  lastHealthOutput(containerId: string): Promise<string | undefined>;
}
