import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';
import { createDockerClient, imageSegment } from './docker-client.js';
import { DomainError } from '@hostctl/domain';
import { ImageBuildError, type ImageBuilder } from './image-builder.js';

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
export function createDockerImageBuilder(options: { socketPath: string }): ImageBuilder {
  const docker = createDockerClient(options.socketPath);

  return {
    async build(spec, onLine, signal) {
      // dockerode reads .dockerignore with a plain readFile: a link there would read a worker file.
      const ignore = await lstat(path.join(spec.contextDir, '.dockerignore')).catch(() => null);
      if (ignore && !ignore.isFile()) throw new ImageBuildError('.dockerignore must be a regular file');
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
            rm: true,
            forcerm: true,
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
