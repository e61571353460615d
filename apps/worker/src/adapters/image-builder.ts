import type { Labels } from './runtime.js';

/**
 * Builds images from a directory on the worker (git/ai deployments). A separate port from
 * ContainerRuntime: building is only needed by repository sources, and a remote builder could
 * implement it without the rest of the runtime.
 */
export interface BuildSpec {
  /** Directory sent as the build context (everything but `.git`; `.dockerignore` applies). */
  contextDir: string;
  /** Dockerfile path relative to the context. */
  dockerfile: string;
  tag: string;
  labels: Labels;
}

export interface BuiltImage {
  id: string;
  /** TCP ports the image declares (EXPOSE, including its base image's). */
  exposedPorts: number[];
}

export interface ImageBuilder {
  /** Creates what builds need up front (the build network), so the egress policy can be checked at start. */
  prepare?(): Promise<void>;
  /** Streams the builder's output line by line; rejects with ImageBuildError when a step fails. */
  build(spec: BuildSpec, onLine: (line: string) => void, signal: AbortSignal): Promise<BuiltImage>;
}

/** The Dockerfile itself failed (a RUN step, a missing file, an unknown base image): not retryable. */
export class ImageBuildError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ImageBuildError';
  }
}
