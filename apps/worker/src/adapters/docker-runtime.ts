import Docker from 'dockerode';
import { CONTAINER_CAPABILITIES, DEFAULT_CONTAINER_LIMITS } from '@hostctl/compose';
import { DomainError } from '@hostctl/domain';
import {
  checkedImageReference,
  createDockerClient,
  imageSegment,
  isImageId,
  isNamedBy,
  objectSegment,
} from './docker-client.js';
import type { ContainerRuntime, ContainerSpec, ContainerState, Labels, NamedObject } from './runtime.js';
import { statusOf, toRuntimeError, fail, ignoreStatus, ignoreStatuses } from './docker-errors.js';
import { defaultBridgeName } from '../egress/sandbox-bridges.js';

const BRIDGE_NAME_OPTION = 'com.docker.network.bridge.name';

/**
 * ContainerRuntime on one Docker engine through dockerode (lint keeps dockerode inside these
 * adapters; docker-client.ts makes the client and encodes every name). Docker errors are turned into DomainErrors (runtime_error is retryable, image_unavailable is not), and
 * "already gone" (404) on removal counts as success so every delete is idempotent.
 */
export function createDockerRuntime(options: { socketPath: string }): ContainerRuntime {
  const docker = createDockerClient(options.socketPath);
  const labelFilter = (labels: Labels) =>
    JSON.stringify({ label: Object.entries(labels).map(([key, value]) => `${key}=${value}`) });

  return {
    async ping() {
      await docker.ping().catch(fail('the Docker engine is unreachable'));
    },

    async inspectImage(reference) {
      try {
        const image = await docker.getImage(imageSegment(reference)).inspect();
        // A full id is exact (a rollback pins images built here so); its digest is the id itself.
        if (isImageId(reference)) return image.Id === reference ? { id: image.Id, digest: image.Id } : null;
        // Found by id prefix rather than by name: not the image the plan names.
        if (!isNamedBy(reference, image)) return null;
        // An image can carry digests of several repositories; only the referenced one's is meaningful.
        const repository = repositoryOf(reference);
        const digest = image.RepoDigests?.find((entry) => entry.startsWith(`${repository}@`));
        return { id: image.Id, digest: digest ?? image.Id };
      } catch (error) {
        if (statusOf(error) === 404) return null;
        throw toRuntimeError(error, `cannot inspect image ${reference}`);
      }
    },

    async pullImage(reference, onProgress, signal) {
      const stream = await docker
        .pull(checkedImageReference(reference), { abortSignal: signal })
        .catch((error: unknown): never => {
          throw statusOf(error) === 404
            ? new DomainError('image_unavailable', `image ${reference} was not found in its registry`, {
                cause: error,
              })
            : toRuntimeError(error, `cannot pull ${reference}`);
        });
      const events = await new Promise<{ status?: string; id?: string; error?: string }[]>(
        (resolve, reject) => {
          docker.modem.followProgress(
            stream,
            (error, output) =>
              error ? reject(toRuntimeError(error, `pulling ${reference} failed`)) : resolve(output as never),
            (event: { status?: string; id?: string; progress?: string }) => {
              // Per-layer byte counters would flood the deploy log; status changes are what a person reads.
              if (event.status && !event.progress)
                onProgress(event.id ? `${event.id}: ${event.status}` : event.status);
            },
          );
        },
      );
      // The engine reports some pull failures inside the stream, not as an HTTP error.
      const failed = events.find((event) => event.error);
      if (failed?.error) {
        const isMissing = /not found|manifest unknown|does not exist|unauthorized/i.test(failed.error);
        throw new DomainError(
          isMissing ? 'image_unavailable' : 'runtime_error',
          `pulling ${reference} failed: ${failed.error}`,
        );
      }
    },

    async pushImage(source, target, signal) {
      const tagged = `${target.repository}:${target.tag}`;
      await docker
        .getImage(imageSegment(source))
        .tag({ repo: checkedImageReference(target.repository), tag: target.tag })
        .catch((error: unknown): never => {
          throw statusOf(error) === 404
            ? new DomainError('image_unavailable', `image ${source} is not on this engine`, { cause: error })
            : toRuntimeError(error, `cannot tag ${source} as ${tagged}`);
        });
      const stream = await docker
        .getImage(imageSegment(tagged))
        // The engine refuses a push without X-Registry-Auth; "{}" is the anonymous push.
        .push({ abortSignal: signal, authconfig: target.auth ?? {} })
        .catch(fail(`cannot push ${tagged}`));
      const events = await new Promise<{ error?: string; aux?: { Digest?: string } }[]>((resolve, reject) =>
        docker.modem.followProgress(stream, (error, output) =>
          error ? reject(toRuntimeError(error, `pushing ${tagged} failed`)) : resolve(output as never),
        ),
      );
      // The engine reports push failures (registry down, refused) inside the stream.
      const failed = events.find((event) => event.error);
      if (failed?.error) throw new DomainError('runtime_error', `pushing ${tagged} failed: ${failed.error}`);
      const digest = events.map((event) => event.aux?.Digest).find(Boolean);
      if (!digest) throw new DomainError('runtime_error', `pushing ${tagged} reported no digest`);
      return `${target.repository}@${digest}`;
    },

    async ensureNetwork(name, labels, options = {}) {
      const existing = await docker.listNetworks({ filters: JSON.stringify({ name: [name] }) });
      if (existing.some((network) => network.Name === name)) return;
      await docker
        .createNetwork({
          Name: name,
          Driver: 'bridge',
          Labels: labels,
          CheckDuplicate: true,
          ...(options.bridge ? { Options: { [BRIDGE_NAME_OPTION]: options.bridge } } : {}),
        })
        .catch(ignoreStatus(409, fail(`cannot create network ${name}`)));
    },

    async ensureVolume(name, labels) {
      // Creating an existing local volume is a no-op in Docker: this is idempotent by itself.
      await docker.createVolume({ Name: name, Labels: labels }).catch(fail(`cannot create volume ${name}`));
    },

    async listContainers(labels) {
      const list = await docker
        .listContainers({ all: true, filters: labelFilter(labels) })
        .catch(fail('cannot list containers'));
      return list.map((item) => ({
        id: item.Id,
        name: (item.Names[0] ?? '').replace(/^\//, ''),
        labels: item.Labels ?? {},
        state: item.State,
      }));
    },

    async createContainer(spec) {
      const container = await docker.createContainer(toCreateOptions(spec)).catch((error: unknown) => {
        throw statusOf(error) === 404
          ? new DomainError('image_unavailable', `image ${spec.image} is not available`, { cause: error })
          : toRuntimeError(error, `cannot create container ${spec.name}`);
      });
      return container.id;
    },

    async inspectContainer(idOrName) {
      try {
        return toState(await docker.getContainer(objectSegment(idOrName, 'container')).inspect());
      } catch (error) {
        if (statusOf(error) === 404) return null;
        throw toRuntimeError(error, `cannot inspect container ${idOrName}`);
      }
    },

    async startContainer(id) {
      // 304: already running, which is what we wanted.
      await docker
        .getContainer(objectSegment(id, 'container'))
        .start()
        .catch(ignoreStatus(304, fail(`cannot start container ${id}`)));
    },

    async stopContainer(id, timeoutSeconds) {
      // 304: already stopped; 404: already gone. Both leave it stopped, which is what we wanted.
      await docker
        .getContainer(objectSegment(id, 'container'))
        .stop({ t: timeoutSeconds })
        .catch(ignoreStatuses([304, 404], fail(`cannot stop container ${id}`)));
    },

    async restartContainer(id, timeoutSeconds) {
      await docker
        .getContainer(objectSegment(id, 'container'))
        .restart({ t: timeoutSeconds })
        .catch(fail(`cannot restart container ${id}`));
    },

    async removeContainer(id) {
      await docker
        .getContainer(objectSegment(id, 'container'))
        .remove({ force: true, v: false })
        .catch(ignoreStatus(404, fail(`cannot remove container ${id}`)));
    },

    async containerLogs(id, tail) {
      try {
        return demux(
          await docker
            .getContainer(objectSegment(id, 'container'))
            .logs({ stdout: true, stderr: true, tail, follow: false }),
        );
      } catch {
        return '';
      }
    },

    async listNetworks(labels): Promise<NamedObject[]> {
      const list = await docker
        .listNetworks({ filters: labelFilter(labels) })
        .catch(fail('cannot list networks'));
      return list.map((network) => ({
        id: network.Id,
        name: network.Name,
        labels: network.Labels ?? {},
        ...(network.Driver === 'bridge'
          ? { bridge: network.Options?.[BRIDGE_NAME_OPTION] ?? defaultBridgeName(network.Id) }
          : {}),
      }));
    },

    async removeNetwork(id) {
      await docker
        .getNetwork(objectSegment(id, 'network'))
        .remove()
        .catch(ignoreStatus(404, fail(`cannot remove network ${id}`)));
    },

    async listVolumes(labels): Promise<NamedObject[]> {
      const list = await docker
        .listVolumes({ filters: labelFilter(labels) })
        .catch(fail('cannot list volumes'));
      return (list.Volumes ?? []).map((volume) => ({
        id: volume.Name,
        name: volume.Name,
        labels: volume.Labels ?? {},
      }));
    },

    async removeVolume(name) {
      await docker
        .getVolume(objectSegment(name, 'volume'))
        .remove()
        .catch(ignoreStatus(404, fail(`cannot remove volume ${name}`)));
    },

    async listImages(labels): Promise<NamedObject[]> {
      const list = await docker
        .listImages({ filters: labelFilter(labels) })
        .catch(fail('cannot list images'));
      return list.map((image) => ({
        id: image.Id,
        name: image.RepoTags?.[0] ?? image.Id,
        labels: image.Labels ?? {},
      }));
    },

    async removeImage(id) {
      await docker
        .getImage(imageSegment(id))
        .remove({ force: true })
        .catch(ignoreStatus(404, fail(`cannot remove image ${id}`)));
    },
  };
}

function toCreateOptions(spec: ContainerSpec): Docker.ContainerCreateOptions {
  const ms = 1_000_000; // Docker takes durations in nanoseconds
  const memory = spec.memoryBytes ?? DEFAULT_CONTAINER_LIMITS.defaultMemoryBytes;
  return {
    name: spec.name,
    Image: spec.image,
    ...(spec.command ? { Cmd: spec.command } : {}),
    ...(spec.entrypoint ? { Entrypoint: spec.entrypoint } : {}),
    Env: spec.env,
    ...(spec.workingDir ? { WorkingDir: spec.workingDir } : {}),
    ...(spec.user ? { User: spec.user } : {}),
    ...(spec.hostname ? { Hostname: spec.hostname } : {}),
    Labels: spec.labels,
    ExposedPorts: Object.fromEntries(spec.exposedPorts.map((port) => [`${port}/tcp`, {}])),
    ...(spec.healthcheck
      ? {
          Healthcheck: {
            Test: spec.healthcheck.test,
            Interval: spec.healthcheck.intervalMs * ms,
            Timeout: spec.healthcheck.timeoutMs * ms,
            Retries: spec.healthcheck.retries,
            StartPeriod: spec.healthcheck.startPeriodMs * ms,
          },
        }
      : {}),
    HostConfig: {
      Init: spec.init,
      RestartPolicy: {
        Name: spec.restart.name,
        ...(spec.restart.maxRetries !== undefined ? { MaximumRetryCount: spec.restart.maxRetries } : {}),
      },
      // Every tenant container is limited; MemorySwap = Memory means no swap on top of the limit.
      Memory: memory,
      MemorySwap: memory,
      NanoCpus: spec.nanoCpus ?? DEFAULT_CONTAINER_LIMITS.defaultNanoCpus,
      PidsLimit: spec.pidsLimit ?? DEFAULT_CONTAINER_LIMITS.defaultPids,
      // Only the capabilities images need to start as root and drop privileges (see
      // CONTAINER_CAPABILITIES): no NET_RAW (spoofing on the bridge), MKNOD, SYS_CHROOT, AUDIT_WRITE.
      CapDrop: ['ALL'],
      CapAdd: [...CONTAINER_CAPABILITIES],
      Mounts: spec.mounts.map((mount) => ({
        Type: 'volume' as const,
        Source: mount.volume,
        Target: mount.target,
        ReadOnly: mount.readOnly,
      })),
      NetworkMode: spec.network,
      // Defence in depth: setuid binaries inside a tenant image cannot gain privileges.
      SecurityOpt: ['no-new-privileges:true'],
    },
    NetworkingConfig: { EndpointsConfig: { [spec.network]: { Aliases: spec.aliases } } },
  };
}

function toState(info: Docker.ContainerInspectInfo): ContainerState {
  const networks = Object.values(info.NetworkSettings?.Networks ?? {});
  const ip = networks.map((network) => network.IPAddress).find((address) => address);
  const checks = (info.State as { Health?: DockerHealth }).Health;
  const health = checks?.Status;
  return {
    id: info.Id,
    name: info.Name.replace(/^\//, ''),
    labels: info.Config?.Labels ?? {},
    status: info.State.Status,
    isRunning: info.State.Running,
    isRestarting: info.State.Restarting,
    exitCode: info.State.ExitCode,
    restartCount: info.RestartCount ?? 0,
    oomKilled: info.State.OOMKilled,
    ...(health === 'starting' || health === 'healthy' || health === 'unhealthy'
      ? { health, healthyStreak: passingStreak(checks?.Log ?? []) }
      : {}),
    ...(ip ? { ip } : {}),
    ...(info.State.Error ? { error: info.State.Error } : {}),
  };
}

interface DockerHealth {
  Status?: string;
  /** The latest results, oldest first (the engine keeps 5). */
  Log?: { ExitCode?: number }[] | null;
}

/** How many of the latest health check results passed in a row. */
function passingStreak(log: NonNullable<DockerHealth['Log']>): number {
  let streak = 0;
  for (let index = log.length - 1; index >= 0 && log[index]?.ExitCode === 0; index -= 1) streak += 1;
  return streak;
}

/** Non-TTY container output is multiplexed in 8-byte-header frames (byte 0: 1 stdout, 2 stderr). */
function frames(raw: Buffer): { stream: number; payload: Buffer }[] {
  const found: { stream: number; payload: Buffer }[] = [];
  let offset = 0;
  while (offset + 8 <= raw.length) {
    const size = raw.readUInt32BE(offset + 4);
    found.push({ stream: raw[offset]!, payload: raw.subarray(offset + 8, offset + 8 + size) });
    offset += 8 + size;
  }
  return found;
}

/** The output of both streams, in the order it was written. */
export function demux(raw: Buffer): string {
  if (!Buffer.isBuffer(raw)) return String(raw);
  return Buffer.concat(frames(raw).map((frame) => frame.payload)).toString('utf8');
}

/** stdout and stderr apart (for a program whose exit and error text are read separately). */
export function demuxStreams(raw: Buffer): { stdout: string; stderr: string } {
  const of = (stream: number) =>
    Buffer.concat(
      frames(raw)
        .filter((frame) => frame.stream === stream)
        .map((frame) => frame.payload),
    ).toString('utf8');
  return { stdout: of(1), stderr: of(2) };
}

/** `host:5000/app:1` → `host:5000/app`; `app@sha256:…` → `app`. */
function repositoryOf(reference: string): string {
  const withoutDigest = reference.split('@')[0]!;
  const lastSlash = withoutDigest.lastIndexOf('/');
  const colon = withoutDigest.indexOf(':', lastSlash + 1);
  return colon < 0 ? withoutDigest : withoutDigest.slice(0, colon);
}
