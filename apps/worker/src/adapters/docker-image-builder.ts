import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_CONTAINER_LIMITS, type ContainerLimitPolicy } from '@hostctl/compose';
import { DomainError, OWNER_LABEL } from '@hostctl/domain';
import { BUILD_BRIDGE, BUILD_NETWORK } from '../egress/sandbox-bridges.js';
import { checkDockerfile, type ImageCheck } from '../sources/dockerfile-policy.js';
import { RepositoryContentError, readRepoFile } from '../sources/repo-files.js';
import { createDockerClient, imageSegment } from './docker-client.js';
import { ImageBuildError, type ImageBuilder } from './image-builder.js';
import { toRuntimeError } from './docker-errors.js';

const MAX_DOCKERFILE_BYTES = 1024 * 1024;
/** How long a worker that lost the race to create the build network waits to see the winner's. */
const NETWORK_APPEAR_MS = 5000;
const NETWORK_POLL_MS = 200;

export interface DockerImageBuilderOptions {
  socketPath: string;
  /**
   * Network of every RUN step: a user-defined bridge of its own (created when missing), so builds
   * never depend on the default bridge docker0 (absent on some hosts) and run under the egress
   * policy like service containers. Tests pass another network to show what the policy changes.
   */
  network?: { name: string; bridge: string };
  /** The image policy for FROM lines; without it every FROM image is accepted. */
  checkImage?: ImageCheck;
  /**
   * A tenant's Dockerfile runs arbitrary commands: its build containers get the per-container
   * ceilings (CONTAINER_MAX_MEMORY_MB, CONTAINER_MAX_CPUS). The classic build API has no pids
   * or capability options; see docs/security/limits.md.
   */
  limits?: ContainerLimitPolicy;
}

interface BuildEvent {
  stream?: string;
  status?: string;
  error?: string;
  errorDetail?: { message?: string };
  aux?: { ID?: string };
}

/**
 * ImageBuilder on the Docker engine's classic builder (`version: '1'`): BuildKit would try to pull
 * a frontend for `# syntax=` lines, which fails offline, and its progress format differs. The
 * engine reports a failed step inside the progress stream, not as an HTTP error, so the stream is
 * scanned for `error` entries; dockerode's buildImage does not reject on them.
 */
export function createDockerImageBuilder(options: DockerImageBuilderOptions): ImageBuilder {
  const docker = createDockerClient(options.socketPath);
  const network = options.network ?? { name: BUILD_NETWORK, bridge: BUILD_BRIDGE };
  const limits = options.limits ?? DEFAULT_CONTAINER_LIMITS;
  const cpuPeriod = 100_000;

  const networkExists = async () => {
    const existing = await docker.listNetworks({ filters: JSON.stringify({ name: [network.name] }) });
    return existing.some((found) => found.Name === network.name);
  };
  const ensureNetwork = async () => {
    if (await networkExists()) return;
    try {
      await docker.createNetwork({
        Name: network.name,
        Driver: 'bridge',
        CheckDuplicate: true,
        // No service label: the reconciler's orphan sweep only removes objects of a service.
        Labels: { [OWNER_LABEL]: 'true', 'io.hostctl.role': 'build' },
        Options: { 'com.docker.network.bridge.name': network.bridge },
      });
    } catch (error) {
      // Workers starting together on a new host race to create it: the engine answers the loser
      // 409 (same name) or "networks have same bridge name" (500). The winner's network may not be
      // listed yet when the loser hears of it (seen on a loaded engine), so it is given a moment.
      for (let waited = 0; waited <= NETWORK_APPEAR_MS; waited += NETWORK_POLL_MS) {
        if (await networkExists()) return;
        await sleep(NETWORK_POLL_MS);
      }
      throw toRuntimeError(error, `cannot create the build network ${network.name}`);
    }
  };

  /** Refuses, before the daemon sees it, a Dockerfile that would make the daemon fetch something. */
  const checkFile = async (spec: { contextDir: string; dockerfile: string }) => {
    let text: string;
    try {
      text = await readRepoFile(spec.contextDir, spec.dockerfile, MAX_DOCKERFILE_BYTES);
    } catch (error) {
      if (error instanceof RepositoryContentError) throw new ImageBuildError(error.message);
      throw error;
    }
    const verdict = checkDockerfile(text, {
      name: spec.dockerfile,
      ...(options.checkImage ? { checkImage: options.checkImage } : {}),
    });
    if (!verdict.ok) throw new ImageBuildError(verdict.problems.join('; '));
  };

  return {
    prepare: ensureNetwork,

    async build(spec, onLine, signal) {
      // dockerode reads .dockerignore with a plain readFile: a link there would read a worker file.
      const ignore = await lstat(path.join(spec.contextDir, '.dockerignore')).catch(() => null);
      if (ignore && !ignore.isFile()) throw new ImageBuildError('.dockerignore must be a regular file');
      await checkFile(spec);
      await ensureNetwork();
      // `.git` stays out of the context: history is not part of the image, and it can be large.
      const entries = (await readdir(spec.contextDir)).filter((name) => name !== '.git');
      const stream = await docker
        .buildImage(
          { context: spec.contextDir, src: entries },
          {
            t: spec.tag,
            dockerfile: spec.dockerfile,
            labels: spec.labels,
            version: '1',
            networkmode: network.name,
            rm: true,
            forcerm: true,
            memory: limits.maxMemoryBytes,
            memswap: limits.maxMemoryBytes,
            cpuperiod: cpuPeriod,
            cpuquota: Math.round((limits.maxNanoCpus / 1e9) * cpuPeriod),
            abortSignal: signal,
          },
        )
        .catch((error: unknown): never => {
          throw new DomainError(
            'runtime_error',
            `cannot start the build of ${spec.tag}: ${messageOf(error)}`,
            {
              cause: error,
            },
          );
        });
      const events = await new Promise<BuildEvent[]>((resolve, reject) => {
        docker.modem.followProgress(
          stream,
          (error, output) =>
            error
              ? reject(new DomainError('runtime_error', `building ${spec.tag} failed: ${messageOf(error)}`))
              : resolve(output as BuildEvent[]),
          (event: BuildEvent) => {
            for (const line of (event.stream ?? '').split('\n')) if (line.trim()) onLine(line.trimEnd());
            if (event.error) onLine(event.error);
          },
        );
      });
      signal.throwIfAborted();
      const failed = events.find((event) => event.error);
      if (failed) throw new ImageBuildError(failed.errorDetail?.message ?? failed.error ?? 'unknown error');
      const image = await docker.getImage(imageSegment(spec.tag)).inspect();
      const ports = Object.keys(image.Config?.ExposedPorts ?? {})
        .filter((key) => key.endsWith('/tcp') || !key.includes('/'))
        .map((key) => Number(key.split('/')[0]))
        .filter((port) => Number.isInteger(port) && port > 0)
        .sort((a, b) => a - b);
      return { id: image.Id, exposedPorts: ports };
    },
  };
}

function messageOf(error: unknown): string {
  return (
    (error as { json?: { message?: string } } | null)?.json?.message ??
    (error instanceof Error ? error.message : String(error))
  );
}
