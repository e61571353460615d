import Docker from 'dockerode';
import modemHttp from 'docker-modem/lib/http.js';
import { DomainError } from '@hostctl/domain';
import { parseImageReference } from '@hostctl/source-policy';

/**
 * The one way the worker makes a Docker client, and the one way a value gets into a Docker API path.
 *
 * Why: dockerode pastes names into URL paths unencoded (`/images/<name>/json`). The engine's router
 * answers a path with `..` segments with a 301 to the cleaned path, and docker-modem follows
 * redirects with its own copy of follow-redirects (lib/http.js): the follow-up request goes out
 * over TCP to whatever host the Location resolves to (`x/../../containers/foo` → a host named
 * `containers`) and has no 'error' listener, so its ENOTFOUND killed the worker. Percent-encoding
 * alone does not help: the engine decodes `%2F..%2F` before cleaning and redirects all the same.
 *  - The engine never legitimately redirects, so redirects are switched off (maxRedirects 0: the
 *    redirect surfaces as an error on the original request, which docker-modem does listen to).
 *  - Every name is validated (image references by Docker's grammar, other names by Docker's name
 *    rules) and then encoded, so nothing a tenant wrote can add path segments, a query or a fragment.
 */
// A static import, not require(): the production images bundle the worker (docker/bundle.mjs), and
// only an import lets the bundler see the module and share one instance with docker-modem's own.
modemHttp.maxRedirects = 0;

/**
 * `timeoutMs`: a request whose socket stays silent that long fails (docker-modem's idle timeout);
 * for engines reached through a forwarded socket, where a dead node would otherwise hang a caller.
 */
export function createDockerClient(socketPath: string, options: { timeoutMs?: number } = {}): Docker {
  return new Docker({ socketPath, ...(options.timeoutMs ? { timeout: options.timeoutMs } : {}) });
}

// Container, network and volume names and ids (hex, or `sha256:<hex>` for images), as Docker allows them.
const OBJECT_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,254}$/;
const IMAGE_ID = /^sha256:[a-f0-9]{64}$/;

/** A container/network/volume name or id, checked and encoded for a Docker API path. */
export function objectSegment(value: string, what: string): string {
  if (typeof value !== 'string' || !OBJECT_NAME.test(value))
    throw new DomainError(
      'validation_failed',
      `refusing ${what} ${JSON.stringify(value)}: not a Docker name`,
    );
  return encodeURIComponent(value);
}

/** A full image id (sha256:<64 hex>): names exactly one image, unlike a short id prefix. */
export function isImageId(value: string): boolean {
  return IMAGE_ID.test(value);
}

/** An image reference (Docker's grammar) or an image id, checked and encoded for a Docker API path. */
export function imageSegment(value: string): string {
  if (typeof value === 'string' && IMAGE_ID.test(value)) return encodeURIComponent(value);
  const parsed = parseImageReference(value);
  if (!parsed.ok)
    throw new DomainError(
      'validation_failed',
      `refusing image ${JSON.stringify(value)}: it ${parsed.reason}`,
    );
  return encodeURIComponent(parsed.image.text);
}

/** An image reference checked by Docker's grammar, as given (for query parameters such as pull's). */
export function checkedImageReference(value: string): string {
  return decodeURIComponent(imageSegment(value));
}

/**
 * Whether an inspected image is the one `reference` names, not one the engine found another way:
 * for a name it has no tag for, the engine falls back to an id-prefix search, so `cafe` can
 * return any image whose id starts with cafe. Only a RepoTags/RepoDigests entry counts.
 */
export function isNamedBy(
  reference: string,
  image: { RepoTags?: string[] | null; RepoDigests?: string[] | null },
): boolean {
  const parsed = parseImageReference(reference);
  if (!parsed.ok) return false;
  const { domain, path, tag, digest } = parsed.image;
  const isHub = !domain || domain === 'docker.io' || domain === 'index.docker.io';
  const repository = isHub ? path.replace(/^library\//, '') : `${domain}/${path}`;
  if (digest) return (image.RepoDigests ?? []).includes(`${repository}@${digest}`);
  return (image.RepoTags ?? []).includes(`${repository}:${tag ?? 'latest'}`);
}
