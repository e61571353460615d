import { Writable, type Readable } from 'node:stream';
import type Docker from 'dockerode';
import { createDockerClient, objectSegment } from './docker-client.js';
import { DomainError } from '@hostctl/domain';
import type { Labels } from './runtime.js';
import type {
  ContainerEvent,
  ContainerTelemetry,
  ContainerUsage,
  LogFollow,
  LogFollowOptions,
  OutputStream,
} from './telemetry.js';
import { statusOf, toRuntimeError, fail } from './docker-errors.js';
import { createCpuReadings } from './cpu-readings.js';

/**
 * ContainerTelemetry on one Docker engine through dockerode (lint keeps dockerode inside these
 * adapters; docker-client.ts is where clients are made and names encoded). Reads only: it never changes a container. Failures become runtime_error
 * DomainErrors; a container that is already gone is `null`, not an error.
 */
export function createDockerTelemetry(options: {
  socketPath: string;
  timeoutMs?: number;
}): ContainerTelemetry {
  const docker = createDockerClient(options.socketPath, options);
  const engineInfo = async () => {
    const info = (await docker.info().catch(fail('cannot read the Docker engine info'))) as {
      ID?: string;
      MemTotal?: number;
    };
    if (!info.ID) throw new DomainError('runtime_error', 'the Docker engine reported no ID');
    return { id: info.ID, memoryBytes: info.MemTotal ?? 0 };
  };
  const cpuReadings = createCpuReadings();
  // Read once: a container without a memory limit reports this engine's memory as its limit.
  let hostMemory: Promise<number> | undefined;
  const hostMemoryBytes = (): Promise<number> =>
    (hostMemory ??= engineInfo().then(
      (info) => info.memoryBytes,
      (error: unknown) => {
        hostMemory = undefined;
        throw error;
      },
    ));

  return {
    engineInfo,

    async followLogs(containerId, options, onChunk, signal) {
      const raw = (await docker
        .getContainer(objectSegment(containerId, 'container'))
        .logs(followLogOptions(options, signal))
        .catch(fail(`cannot follow the output of container ${containerId}`))) as unknown as Readable;
      return followOutput(docker, raw, onChunk, signal);
    },

    async watchEvents(labels, onEvent, signal) {
      const stream = (await docker
        .getEvents({
          filters: {
            type: ['container'],
            event: ['start', 'die', 'destroy'],
            label: Object.entries(labels).map(([key, value]) => `${key}=${value}`),
          },
          abortSignal: signal,
        } as Docker.GetEventsOptions)
        .catch(fail('cannot watch Docker events'))) as unknown as Readable;
      let pending = '';
      stream.on('data', (chunk: Buffer) => {
        pending += chunk.toString('utf8');
        let newline: number;
        while ((newline = pending.indexOf('\n')) >= 0) {
          const event = toEvent(pending.slice(0, newline));
          pending = pending.slice(newline + 1);
          if (event) onEvent(event);
        }
      });
      await new Promise<void>((resolve, reject) => {
        const onAbort = () => stream.destroy();
        signal.addEventListener('abort', onAbort, { once: true });
        const settle = (error?: Error) => {
          signal.removeEventListener('abort', onAbort);
          if (error && !signal.aborted) reject(toRuntimeError(error, 'the Docker event stream failed'));
          else resolve();
        };
        stream.once('end', () => settle());
        stream.once('close', () => settle());
        stream.on('error', settle);
      });
    },

    async sampleUsage(containerId) {
      try {
        // One-shot: answered at the engine's next collection, not after a second reading a
        // second later, which made a sweep of 500 containers take three times its interval
        // (docs/performance.md#density-500-services-on-one-host).
        const stats = await docker
          .getContainer(objectSegment(containerId, 'container'))
          .stats({ stream: false, 'one-shot': true });
        return toUsage(stats, cpuReadings.percentSince(containerId, stats), await hostMemoryBytes());
      } catch (error) {
        if (statusOf(error) === 404) return null;
        throw toRuntimeError(error, `cannot read the usage of container ${containerId}`);
      }
    },

    async diskUsage() {
      const df = (await docker.df().catch(fail('cannot read Docker disk usage'))) as {
        Volumes?: { Name: string; Labels?: Labels | null; UsageData?: { Size?: number } | null }[] | null;
        Containers?: { Id: string; Labels?: Labels | null; SizeRw?: number }[] | null;
      };
      return {
        // Docker reports -1 when it could not compute a size.
        volumes: (df.Volumes ?? []).map((volume) => ({
          name: volume.Name,
          labels: volume.Labels ?? {},
          sizeBytes: Math.max(0, volume.UsageData?.Size ?? 0),
        })),
        containers: (df.Containers ?? []).map((container) => ({
          id: container.Id,
          labels: container.Labels ?? {},
          sizeBytes: Math.max(0, container.SizeRw ?? 0),
        })),
      };
    },

    async lastHealthOutput(containerId) {
      try {
        const info = await docker.getContainer(objectSegment(containerId, 'container')).inspect();
        const log = (info.State as { Health?: { Log?: { Output?: string }[] } }).Health?.Log ?? [];
        const output = log.at(-1)?.Output?.trim();
        return output ? output.slice(0, 500) : undefined;
      } catch {
        return undefined;
      }
    },
  };
}

/** The query of a followed log (a container's, or a Swarm task's through the manager). */
export function followLogOptions({ since, tail, timestamps }: LogFollowOptions, signal: AbortSignal) {
  return {
    follow: true as const,
    stdout: true,
    stderr: true,
    timestamps: timestamps ?? true,
    ...(since ? { since } : {}),
    ...(tail !== undefined ? { tail } : {}),
    abortSignal: signal,
  };
}

/**
 * Follows a multiplexed output stream (of a container, or of a Swarm task through the manager)
 * until it ends or the signal aborts.
 */
export function followOutput(
  docker: Docker,
  raw: Readable,
  onChunk: (stream: OutputStream, chunk: Buffer) => void,
  signal: AbortSignal,
): LogFollow {
  docker.modem.demuxStream(raw, chunkSink('stdout', onChunk), chunkSink('stderr', onChunk));
  const done = new Promise<void>((resolve) => {
    raw.once('end', resolve);
    raw.once('close', resolve);
    // `on`, not `once`: a second error without a listener would crash the process.
    raw.on('error', () => resolve());
  });
  const onAbort = () => raw.destroy();
  if (signal.aborted) onAbort();
  signal.addEventListener('abort', onAbort, { once: true });
  void done.then(() => signal.removeEventListener('abort', onAbort));
  return { done, pause: () => void raw.pause(), resume: () => void raw.resume() };
}

/**
 * demuxStream only calls write(); delivering synchronously (instead of through Writable's
 * buffering) keeps stdout and stderr chunks in the order Docker sent them.
 */
function chunkSink(stream: OutputStream, onChunk: (stream: OutputStream, chunk: Buffer) => void): Writable {
  const sink = new Writable();
  sink.write = (chunk: unknown) => {
    onChunk(stream, Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
    return true;
  };
  return sink;
}

function toEvent(line: string): ContainerEvent | null {
  try {
    const raw = JSON.parse(line) as { Action?: string; Actor?: { ID?: string; Attributes?: Labels } };
    const action = raw.Action;
    if ((action !== 'start' && action !== 'die' && action !== 'destroy') || !raw.Actor?.ID) return null;
    return { action, containerId: raw.Actor.ID, labels: raw.Actor.Attributes ?? {} };
  } catch {
    return null;
  }
}

/** The `docker stats` arithmetic: CPU from the two readings' deltas, memory without page cache. */
function toUsage(stats: Docker.ContainerStats, cpuPercent: number, hostMemoryBytes: number): ContainerUsage {
  const memory = stats.memory_stats ?? {};
  const details = (memory as { stats?: Record<string, number> }).stats ?? {};
  // cgroup v1 reports total_inactive_file, v2 inactive_file: the cache the kernel can reclaim.
  const cache = details.total_inactive_file ?? details.inactive_file ?? 0;
  const usage = memory.usage ?? 0;
  const networks = Object.values(stats.networks ?? {});
  return {
    cpuPercent,
    memoryBytes: cache < usage ? usage - cache : usage,
    // At or above the host's memory: no limit, said as Infinity whichever engine reported it.
    memoryLimitBytes:
      hostMemoryBytes > 0 && (memory.limit ?? 0) >= hostMemoryBytes
        ? Number.POSITIVE_INFINITY
        : (memory.limit ?? 0),
    networkRxBytes: networks.reduce((sum, network) => sum + (network.rx_bytes ?? 0), 0),
    networkTxBytes: networks.reduce((sum, network) => sum + (network.tx_bytes ?? 0), 0),
  };
}
