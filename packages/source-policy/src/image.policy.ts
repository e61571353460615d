import { isAllowlisted, type AllowedHost } from './allowed-hosts.js';
import { checkHostSyntax, checkPublicTarget } from './git-url.policy.js';
import { parseImageReference, type ImageReference } from './image-reference.js';
import { refuse, type PolicyResult } from './policy-result.js';
import { protectedEndpointAt, type Endpoint } from './protected-endpoints.js';

/**
 * Which images a tenant's plan may run (compose `image`, template-rendered images, a repository's
 * compose file). Network-free, so the API refuses at create time; the worker repeats it before
 * pulling and adds the DNS check of the registry host (host.policy.ts).
 *  - Built images belong to their service: the `hostctl` namespace (what the builder tags, on any
 *    registry) is reserved; only the worker's own build step produces it, and a plan may name it
 *    only for the service that built it (`ownBuildPrefixes`).
 *  - An image without a registry host resolves on the engine (every tenant's images live there),
 *    so it must be an operator-approved platform image (PLATFORM_IMAGES and the template catalog).
 *  - A registry host passes the same SSRF policy as git hosts, with REGISTRY_ALLOWED_HOSTS as the
 *    allowlist (host and port; 443 by default, as the engine pulls over https), and never a
 *    control-plane endpoint.
 */
export const RESERVED_IMAGE_NAMESPACE = 'hostctl';
export const REGISTRY_DEFAULT_PORT = 443;

export interface ImagePolicy {
  /** PLATFORM_IMAGES plus the catalog's literal images: exact references or `*` globs. */
  platformImages: readonly string[];
  registryAllowedHosts: readonly AllowedHost[];
  protectedEndpoints: readonly Endpoint[];
}

export interface ImageCheckContext {
  /** Repositories (without tag) the current deployment built itself: `hostctl/<id12>`, … */
  ownBuildPrefixes?: readonly string[];
}

export interface CheckedImage {
  image: ImageReference;
  /**
   * The registry host is neither allowlisted nor operator-listed: the worker resolves it and
   * refuses internal addresses before pulling (host.policy.ts), as it does for git hosts.
   */
  mustResolveHost: boolean;
}

export function checkImage(
  text: unknown,
  policy: ImagePolicy,
  context: ImageCheckContext = {},
): PolicyResult<CheckedImage> {
  const reference = parseImageReference(text);
  if (!reference.ok) return reference;
  const { image } = reference;
  const parsed = { ok: true as const, image, mustResolveHost: false };
  const namespace = image.path.split('/')[0];
  const isDockerHub = image.domain === 'docker.io' || image.domain === 'index.docker.io';
  if (namespace === RESERVED_IMAGE_NAMESPACE || (isDockerHub && image.path.startsWith('library/hostctl/'))) {
    const isOwn = (context.ownBuildPrefixes ?? []).some((prefix) => !image.domain && image.path === prefix);
    if (!isOwn)
      return refuse(
        `names the reserved "${RESERVED_IMAGE_NAMESPACE}/" namespace of images the platform builds; only the service that built an image runs it`,
      );
    return parsed;
  }
  if (isPlatformImage(image.text, policy.platformImages)) {
    const endpointProblem = image.host ? checkEndpoint(image, policy) : null;
    return endpointProblem ? refuse(endpointProblem) : parsed;
  }
  if (!image.domain)
    return refuse(
      'names no registry host and is not a platform image; use registry.example.com/app:1 or an image in PLATFORM_IMAGES',
    );
  const host = image.host ?? '';
  const syntax = checkHostSyntax(host.includes(':') ? `[${host}]` : host);
  if (syntax) return refuse(syntax.replace(/^has a host/, 'has a registry host'));
  const endpointProblem = checkEndpoint(image, policy);
  if (endpointProblem) return refuse(endpointProblem);
  if (isAllowlisted(host, image.port, REGISTRY_DEFAULT_PORT, policy.registryAllowedHosts)) return parsed;
  const target = checkPublicTarget(host, 'REGISTRY_ALLOWED_HOSTS');
  if (target) return refuse(`has a registry host that ${target}`);
  return { ...parsed, mustResolveHost: true };
}

function checkEndpoint(image: ImageReference, policy: ImagePolicy): string | null {
  const endpoint = protectedEndpointAt(
    image.host ?? '',
    image.port ?? REGISTRY_DEFAULT_PORT,
    policy.protectedEndpoints,
  );
  return endpoint
    ? `has a registry host that points at a control-plane endpoint (port ${endpoint.port}), which is never allowed`
    : null;
}

/**
 * An entry matches the reference as written: exactly, as a `*` glob (`*` never crosses "/"), or,
 * for an entry with neither tag nor digest, any tag of that repository (`nginx` → `nginx:1.27`).
 */
export function isPlatformImage(text: string, entries: readonly string[]): boolean {
  return entries.some((entry) => {
    if (entry === text) return true;
    if (entry.includes('*')) return globToRegExp(entry).test(text);
    const lastSlash = entry.lastIndexOf('/');
    const hasTag = entry.includes(':', lastSlash + 1) || entry.includes('@');
    return !hasTag && (text.startsWith(`${entry}:`) || text.startsWith(`${entry}@`));
  });
}

function globToRegExp(glob: string): RegExp {
  const body = glob
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('[^/]*');
  return new RegExp(`^${body}$`);
}

/** PLATFORM_IMAGES as configured: comma-separated, blanks dropped. */
export function parsePlatformImages(csv: string | undefined): string[] {
  return (csv ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
}
