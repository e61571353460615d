import { DomainError } from '@hostctl/domain';
import { basicAuthorization, type RegistryAuth } from './registry-auth.js';

/**
 * The platform registry (REGISTRY) over the Docker Registry HTTP API v2: what the worker pushed
 * for the nodes is listed and deleted here, so images do not pile up there forever. Deleting a
 * manifest frees its tags at once; the blobs' disk space comes back when the operator runs the
 * registry's garbage collection (docs/multi-host.md). The registry must allow deletes
 * (`storage.delete.enabled`); a registry that refuses them (405) is reported, not retried.
 */
export interface ImageRegistry {
  /** Repositories whose name starts with `prefix`. */
  repositories(prefix: string): Promise<string[]>;
  /** The tags of a repository; [] when it has none or does not exist. */
  tags(repository: string): Promise<string[]>;
  /** The manifest digest `tag` points at; undefined when the tag is gone. */
  digest(repository: string, tag: string): Promise<string | undefined>;
  /**
   * Deletes a manifest, and with it every tag pointing at it (the registry API deletes by digest);
   * a manifest already gone is success.
   */
  deleteManifest(repository: string, digest: string): Promise<void>;
}

/** What a client of the registry is let do (release/registry-access.ts). */
export interface RegistryProbe {
  /** Whether the registry lets this client (its credentials, or none) read: `GET /v2/` answers 2xx. */
  letsRead(): Promise<boolean>;
  /**
   * Whether the registry lets this client push: it opens a blob upload (202), which is cancelled
   * at once (nothing is written). Answered for registry-access.ts, which wants it refused to the
   * nodes' read-only credentials and to anyone without credentials.
   */
  letsPush(): Promise<boolean>;
}

/** The repository the push probe opens (and cancels) an upload in. */
const ACCESS_PROBE_REPOSITORY = 'hostctl/registry-access-check';

const MANIFEST_TYPES = [
  'application/vnd.docker.distribution.manifest.v2+json',
  'application/vnd.docker.distribution.manifest.list.v2+json',
  'application/vnd.oci.image.manifest.v1+json',
  'application/vnd.oci.image.index.v1+json',
].join(', ');
const REPOSITORY = /^[a-z0-9]+(?:[._-][a-z0-9]+)*(?:\/[a-z0-9]+(?:[._-][a-z0-9]+)*)*$/;
const TAG = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;
const DIGEST = /^sha256:[a-f0-9]{64}$/;
const TIMEOUT_MS = 10_000;
const CATALOG_PAGE = 100;

/**
 * `registry` is REGISTRY as configured (`host:port`). Like Docker, a loopback registry is spoken
 * to over plain HTTP and any other over HTTPS, falling back to HTTP when TLS fails (a registry
 * the nodes list as insecure). `auth` is sent on every request (HTTP Basic).
 */
export function createImageRegistry(options: {
  registry: string;
  auth?: RegistryAuth;
}): ImageRegistry & RegistryProbe {
  const host = options.registry.replace(/\/+$/, '');
  const isLoopback = /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])(:\d+)?$/.test(host);
  let scheme: 'http' | 'https' = isLoopback ? 'http' : 'https';

  const request = async (path: string, init: RequestInit = {}): Promise<Response> => {
    const send = () =>
      fetch(`${scheme}://${host}/v2/${path}`, {
        ...init,
        headers: {
          ...(init.headers as Record<string, string> | undefined),
          ...(options.auth ? { authorization: basicAuthorization(options.auth) } : {}),
        },
        // The registry never legitimately redirects a worker elsewhere.
        redirect: 'error',
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    try {
      return await send();
    } catch (error) {
      if (scheme === 'http') throw registryError(`cannot reach the registry ${host}`, error);
      scheme = 'http';
      return send().catch((fallback: unknown) => {
        throw registryError(`cannot reach the registry ${host}`, fallback);
      });
    }
  };

  const checked = (repository: string, tag?: string) => {
    if (!REPOSITORY.test(repository) || (tag !== undefined && !TAG.test(tag)))
      throw new DomainError(
        'validation_failed',
        `refusing registry path ${repository}${tag ? `:${tag}` : ''}`,
      );
    return tag === undefined ? repository : `${repository}/manifests/${tag}`;
  };

  return {
    async repositories(prefix) {
      // The catalog is sorted and paged; `last` lists the names after it. Starting at the prefix
      // and stopping at the first name without it reads the service's repositories only, not
      // every repository of the registry on each release.
      const found: string[] = [];
      let last = prefix;
      for (;;) {
        const response = await request(`_catalog?n=${CATALOG_PAGE}&last=${encodeURIComponent(last)}`);
        if (!response.ok)
          throw registryError(`the registry ${host} answered ${statusOf(response.status)} to its catalog`);
        const page = ((await response.json()) as { repositories?: string[] | null }).repositories ?? [];
        const ours = page.filter((name) => name.startsWith(prefix));
        found.push(...ours);
        if (ours.length < page.length || page.length < CATALOG_PAGE || !response.headers.get('link'))
          return found;
        last = page.at(-1)!;
      }
    },

    async tags(repository) {
      const response = await request(`${checked(repository)}/tags/list`);
      if (response.status === 404) return [];
      if (!response.ok)
        throw registryError(`the registry ${host} answered ${statusOf(response.status)} for ${repository}`);
      const body = (await response.json()) as { tags?: string[] | null };
      return body.tags ?? [];
    },

    async digest(repository, tag) {
      const head = await request(checked(repository, tag), {
        method: 'HEAD',
        headers: { accept: MANIFEST_TYPES },
      });
      if (head.status === 404) return undefined;
      const digest = head.headers.get('docker-content-digest');
      if (!head.ok || !digest || !DIGEST.test(digest))
        throw registryError(
          `the registry ${host} answered ${statusOf(head.status)} for ${repository}:${tag}`,
        );
      return digest;
    },

    async deleteManifest(repository, digest) {
      if (!DIGEST.test(digest)) throw new DomainError('validation_failed', `refusing digest ${digest}`);
      const deleted = await request(`${checked(repository)}/manifests/${digest}`, { method: 'DELETE' });
      if (deleted.ok || deleted.status === 404) return;
      throw registryError(
        deleted.status === 405
          ? `the registry ${host} does not allow deletes (storage.delete.enabled)`
          : `the registry ${host} answered ${statusOf(deleted.status)} deleting ${repository}@${digest}`,
      );
    },

    async letsRead() {
      return (await request('')).ok;
    },

    async letsPush() {
      const opened = await request(`${ACCESS_PROBE_REPOSITORY}/blobs/uploads/`, { method: 'POST' });
      if (opened.status !== 202) return false;
      // The upload's own location, on this registry only (a relative or same-host URL).
      const location = new URL(opened.headers.get('location') ?? '', `${scheme}://${host}/`);
      if (location.host === host)
        await request(location.pathname.replace(/^\/v2\//, '') + location.search, { method: 'DELETE' }).catch(
          () => undefined,
        );
      return true;
    },
  };
}

/** A status as the operator needs it: 401 means the credentials are missing or wrong. */
function statusOf(status: number): string {
  return status === 401 ? '401 (check REGISTRY_USERNAME and REGISTRY_PASSWORD)' : String(status);
}

function registryError(message: string, cause?: unknown): DomainError {
  const reason = cause instanceof Error ? `: ${cause.message}` : '';
  return new DomainError('runtime_error', `${message}${reason}`);
}
