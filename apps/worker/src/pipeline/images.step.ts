import { DomainError } from '@hostctl/domain';
import type { Plan } from '@hostctl/compose';
import type { ContainerRuntime } from '../adapters/runtime.js';
import type { DeployLog } from './deploy-log.js';
import { assertImageAllowed, type ImageGuard } from './image-guard.js';

/**
 * Makes every image of the plan available. A reference that names a registry host is pulled each
 * time (that is how a redeploy picks up a new image); one without a host must already exist on
 * the engine: no public registry is assumed to be reachable. Every image passes the image policy
 * first (image-guard.ts), so nothing a tenant wrote reaches the engine unchecked.
 * Returns the digest of each image.
 */
export function namesRegistryHost(reference: string): boolean {
  const slash = reference.indexOf('/');
  if (slash < 0) return false;
  const first = reference.slice(0, slash);
  return first === 'localhost' || first.includes('.') || first.includes(':');
}

export async function ensureImages(
  runtime: Pick<ContainerRuntime, 'inspectImage' | 'pullImage'>,
  plan: Plan,
  log: DeployLog,
  signal: AbortSignal,
  guard: ImageGuard,
  ownBuildPrefixes: readonly string[] = [],
): Promise<Map<string, string>> {
  const digests = new Map<string, string>();
  const images = new Set(plan.containers.map((container) => container.image));
  for (const image of images) {
    if (!image)
      throw new DomainError(
        'invalid_compose',
        'a container has no image (builds are not available for this deploy method)',
      );
    await assertImageAllowed(guard, image, ownBuildPrefixes);
  }
  for (const image of images) {
    if (namesRegistryHost(image)) {
      await log.info(`Pulling ${image}`);
      let lastLine = '';
      await runtime.pullImage(
        image,
        (line) => {
          // Only changes are worth a log row; the engine repeats "Waiting" and the like per layer.
          if (line !== lastLine) void log.info(line);
          lastLine = line;
        },
        signal,
      );
    }
    const found = await runtime.inspectImage(image);
    if (!found) {
      throw new DomainError(
        'image_unavailable',
        `image ${image} is not available on this host and names no registry to pull from; use a registry reference like registry.example.com/app:1`,
      );
    }
    digests.set(image, found.digest);
    await log.info(`Image ${image}: ${found.digest}`);
  }
  return digests;
}
