import { createDockerClient, objectSegment } from './docker-client.js';
import { fail, ignoreStatus } from './docker-errors.js';
import { demuxStreams } from './docker-runtime.js';
import type { Labels } from './runtime.js';

/**
 * Short-lived containers of the backup engine (docs/backups.md): restic, or a busybox copy, run
 * with exactly the mounts given (a service's volume, the customer's repository or the S3 relay's
 * socket) and no network, so nothing but the volume and the repository is reachable from it. Removed once finished, whatever
 * the outcome; a run's leftovers after a worker crash are found by their label and removed first.
 */
export interface EngineMount {
  /** `volume`: a Docker volume by name; `bind`: a host directory (only the repository is). */
  type: 'volume' | 'bind';
  source: string;
  target: string;
  readOnly: boolean;
}

export interface EngineRun {
  name: string;
  image: string;
  cmd: string[];
  /** KEY=value; the repository password is one of these, so never log a run's spec. */
  env: string[];
  mounts: EngineMount[];
  labels: Labels;
  /** Capabilities on top of the file ones (the S3 relay's port below 1024). */
  capAdd?: string[];
  /**
   * A component's own program instead of the engine's (a restore test's verify command): its
   * argv as the whole command (the image's entrypoint replaced), its user and working directory,
   * its limits and the capabilities tenant containers get; still no network.
   */
  component?: {
    user?: string;
    workingDir?: string;
    limits: { Memory: number; NanoCpus: number; PidsLimit: number };
    capabilities: readonly string[];
  };
}

export interface EngineResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

export interface BackupContainers {
  run(spec: EngineRun, signal?: AbortSignal): Promise<EngineResult>;
  /** Removes every container carrying the labels (an interrupted run's). */
  removeLabelled(labels: Labels): Promise<void>;
  ensureVolume(name: string, labels: Labels): Promise<void>;
  removeVolume(name: string): Promise<void>;
}

/** What restic and cp need on a volume's files: read any, restore owners and modes; nothing else. */
const ENGINE_CAPABILITIES = ['CHOWN', 'DAC_OVERRIDE', 'DAC_READ_SEARCH', 'FOWNER', 'FSETID'];
const ENGINE_LIMITS = { Memory: 1024 * 1024 * 1024, NanoCpus: 1_000_000_000, PidsLimit: 256 };

export function createBackupContainers(options: { socketPath: string }): BackupContainers {
  const docker = createDockerClient(options.socketPath);
  const labelFilter = (labels: Labels) =>
    JSON.stringify({ label: Object.entries(labels).map(([key, value]) => `${key}=${value}`) });

  const remove = (id: string) =>
    docker
      .getContainer(objectSegment(id, 'container'))
      .remove({ force: true, v: false })
      .catch(ignoreStatus(404, fail(`cannot remove container ${id}`)));

  return {
    async run(spec, signal) {
      await remove(spec.name);
      const container = await docker
        .createContainer({
          name: objectSegment(spec.name, 'container'),
          Image: spec.image,
          ...(spec.component
            ? {
                Entrypoint: spec.cmd,
                Cmd: [],
                ...(spec.component.user ? { User: spec.component.user } : {}),
                ...(spec.component.workingDir ? { WorkingDir: spec.component.workingDir } : {}),
              }
            : { Cmd: spec.cmd }),
          Env: spec.env,
          Labels: spec.labels,
          NetworkDisabled: true,
          HostConfig: {
            NetworkMode: 'none',
            Mounts: spec.mounts.map((mount) => ({
              Type: mount.type,
              Source: mount.source,
              Target: mount.target,
              ReadOnly: mount.readOnly,
            })),
            CapDrop: ['ALL'],
            CapAdd: spec.component
              ? [...spec.component.capabilities]
              : [...ENGINE_CAPABILITIES, ...(spec.capAdd ?? [])],
            SecurityOpt: ['no-new-privileges'],
            ...(spec.component
              ? { ...spec.component.limits, MemorySwap: spec.component.limits.Memory }
              : ENGINE_LIMITS),
          },
        })
        .catch(fail(`cannot create the backup container ${spec.name}`));
      const abort = () => void container.kill().catch(() => undefined);
      signal?.addEventListener('abort', abort, { once: true });
      try {
        await container.start().catch(fail(`cannot start the backup container ${spec.name}`));
        const waited = (await container.wait().catch(fail('the backup container vanished'))) as {
          StatusCode: number;
        };
        const raw = await container
          .logs({ stdout: true, stderr: true, follow: false })
          .catch(fail('cannot read the backup container output'));
        return { exitCode: waited.StatusCode, ...demuxStreams(raw) };
      } finally {
        signal?.removeEventListener('abort', abort);
        await remove(container.id).catch(() => undefined);
      }
    },

    async removeLabelled(labels) {
      const found = await docker
        .listContainers({ all: true, filters: labelFilter(labels) })
        .catch(fail('cannot list backup containers'));
      for (const item of found) await remove(item.Id);
    },

    async ensureVolume(name, labels) {
      await docker.createVolume({ Name: name, Labels: labels }).catch(fail(`cannot create volume ${name}`));
    },

    async removeVolume(name) {
      await docker
        .getVolume(objectSegment(name, 'volume'))
        .remove()
        .catch(ignoreStatus(404, fail(`cannot remove volume ${name}`)));
    },
  };
}
