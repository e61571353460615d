import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import Docker from 'dockerode';
import { contextTar } from './build-context.js';

export const ROOT = path.resolve(import.meta.dirname, '../../..');
export const docker = new Docker({ socketPath: '/var/run/docker.sock' });

/** The images docker/*.Dockerfile build; the tag is the test's, so an operator's `latest` is untouched. */
export const BASE_IMAGE = 'local/node-base:20';
export const TAG = 'test';
export const IMAGES = {
  api: { dockerfile: 'docker/api.Dockerfile', repository: 'hostctl/api' },
  worker: { dockerfile: 'docker/worker.Dockerfile', repository: 'hostctl/worker' },
  'dev-idp': { dockerfile: 'docker/dev-idp.Dockerfile', repository: 'hostctl/dev-idp' },
  cli: { dockerfile: 'docker/cli.Dockerfile', repository: 'hostctl/cli' },
} as const;
export type AppImage = keyof typeof IMAGES;
export const imageName = (app: AppImage) => `${IMAGES[app].repository}:${TAG}`;

/** Makes local/node-base:20 from the host's binaries; a no-op when it is up to date. */
export async function ensureBaseImage(): Promise<void> {
  await promisify(execFile)('bash', [path.join(ROOT, 'docker/build-base-image.sh'), BASE_IMAGE], {
    timeout: 300_000,
  });
}

interface BuildEvent {
  stream?: string;
  error?: string;
  errorDetail?: { message?: string };
}

/**
 * Builds one image from the repository context. dockerode's build stream does not reject on a
 * failed step: the failure is an `error` entry in the progress output, so every entry is checked.
 */
export async function buildImage(app: AppImage, files: string[]): Promise<{ id: string; log: string }> {
  const previous = await docker
    .getImage(imageName(app))
    .inspect()
    .then((image) => image.Id)
    .catch(() => null);
  const stream = await docker.buildImage(
    contextTar(ROOT, [...files, '.dockerignore', IMAGES[app].dockerfile]),
    {
      dockerfile: IMAGES[app].dockerfile,
      t: imageName(app),
      buildargs: { BASE_IMAGE },
      rm: true,
      forcerm: true,
    },
  );
  const events = await new Promise<BuildEvent[]>((resolve, reject) =>
    docker.modem.followProgress(stream, (error: Error | null, output: BuildEvent[]) =>
      error ? reject(error) : resolve(output),
    ),
  );
  const log = events.map((event) => event.stream ?? '').join('');
  const failure = events.find((event) => event.error !== undefined || event.errorDetail !== undefined);
  if (failure) {
    throw new Error(
      `building ${imageName(app)} failed: ${failure.error ?? failure.errorDetail?.message}\n${log.slice(-4000)}`,
    );
  }
  const { Id: id } = await docker.getImage(imageName(app)).inspect();
  // The tag moved: the old image would only pile up on disk (it may still be in use; then it stays).
  if (previous !== null && previous !== id)
    await docker
      .getImage(previous)
      .remove()
      .catch(() => undefined);
  return { id, log };
}

export interface RunOptions {
  env: Record<string, string>;
  cmd?: string[];
  /** Replaces the image's entrypoint (the CLI image's is `hostctl`). */
  entrypoint?: string[];
  binds?: string[];
  groupAdd?: string[];
}

/** Starts a container on the host network (Postgres and Redis listen on 127.0.0.1 only). */
export async function startContainer(image: string, options: RunOptions): Promise<Docker.Container> {
  const container = await docker.createContainer({
    Image: image,
    Env: Object.entries(options.env).map(([key, value]) => `${key}=${value}`),
    ...(options.cmd ? { Cmd: options.cmd } : {}),
    ...(options.entrypoint ? { Entrypoint: options.entrypoint } : {}),
    Labels: { 'io.hostctl.test': 'images' },
    HostConfig: {
      NetworkMode: 'host',
      Init: true,
      ...(options.binds ? { Binds: options.binds } : {}),
      ...(options.groupAdd ? { GroupAdd: options.groupAdd } : {}),
    },
  });
  await container.start();
  return container;
}

/** Runs a container to its end; returns the exit code and its combined output. */
export async function runToEnd(
  image: string,
  options: RunOptions,
  timeoutMs = 60_000,
): Promise<{ code: number; output: string }> {
  const container = await startContainer(image, options);
  try {
    const result = (await Promise.race([
      container.wait(),
      new Promise((_, reject) =>
        setTimeout(() => reject(new Error(`${image} did not exit within ${timeoutMs} ms`)), timeoutMs),
      ),
    ])) as { StatusCode: number };
    const logs = await container.logs({ stdout: true, stderr: true });
    return { code: result.StatusCode, output: logs.toString('utf8') };
  } finally {
    await container.remove({ force: true }).catch(() => undefined);
  }
}

export async function containerLogs(container: Docker.Container): Promise<string> {
  return (await container.logs({ stdout: true, stderr: true, tail: 50 })).toString('utf8');
}

/** Polls URL until it answers EXPECTED (or the time is up); returns the last response. */
export async function waitForHttp(url: string, expected = 200, timeoutMs = 30_000): Promise<Response> {
  const deadline = Date.now() + timeoutMs;
  let last: Response | Error = new Error('no attempt');
  while (Date.now() < deadline) {
    try {
      last = await fetch(url, { signal: AbortSignal.timeout(2000) });
      if (last.status === expected) return last;
    } catch (error) {
      last = error as Error;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`${url} did not answer ${expected}: ${last instanceof Error ? last.message : last.status}`);
}

/** The id of the build stage's last step in a build log (the image the next build can reuse). */
export function buildStageId(log: string): string | undefined {
  return /RUN node docker\/bundle\.mjs[^\n]*\n(?: ---> Using cache\n)? ---> ([0-9a-f]{12})/.exec(log)?.[1];
}

/**
 * Removes the build-stage images no build uses any more: every change of the context leaves one
 * behind (~280 MB), which would fill a developer's disk over many runs. KEEP are the ones this run
 * built or reused, the cache of the next run.
 */
export async function pruneStaleBuildStages(keep: string[]): Promise<number> {
  const stale = await docker.listImages({
    filters: { dangling: ['true'], label: ['org.hostctl.stage=build'] },
  });
  let removed = 0;
  for (const image of stale) {
    if (keep.some((id) => image.Id.replace(/^sha256:/, '').startsWith(id))) continue;
    await docker
      .getImage(image.Id)
      .remove()
      .then(() => (removed += 1))
      .catch(() => undefined);
  }
  return removed;
}
