import { isIP } from 'node:net';
import { refuse, type PolicyResult } from './policy-result.js';

/**
 * Image references by Docker's reference grammar (distribution/reference), parsed in code so the
 * API, the compose parser and the worker agree on what a reference names:
 *
 *   reference := [domain "/"] path [":" tag] ["@" digest]
 *   domain    := host [":" port]          host: DNS name, IPv4, or "[" IPv6 "]"
 *   path      := component ("/" component)*   component := [a-z0-9]+ (separator [a-z0-9]+)*
 *   separator := "." | "_" | "__" | "-"+       tag := [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}
 *   digest    := "sha256:" 64 lowercase hex
 *
 * The first component is a domain when it has a "." or ":" or is `localhost` (Docker's rule).
 * Stricter than Docker in what cannot be a name but can reach the engine as an id: a 64-hex
 * name, `sha256:<hex>`, and a bare hex name without tag or digest (the engine falls back to an
 * id-prefix search when no such tag exists, so `479b` could name any image on the host). Whatever
 * passes contains no "..", "%", "?", "#", whitespace or upper case in its path, so it can be put
 * into a Docker API URL without the engine redirecting (docker-modem follows redirects).
 */
export const MAX_IMAGE_NAME_LENGTH = 255;
export const MAX_IMAGE_REFERENCE_LENGTH = 512;

export interface ImageReference {
  /** Lower case registry host with `:port`, absent for host-less (Docker Hub / local) names. */
  domain?: string;
  /** The registry host without port (IPv6 without brackets). */
  host?: string;
  port?: number;
  /** Repository path without domain: `library/nginx`, `local/busybox`. */
  path: string;
  tag?: string;
  digest?: string;
  /** The reference as given (already validated): what is pulled and inspected. */
  text: string;
}

const COMPONENT = /^[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*$/;
const TAG = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;
const DIGEST = /^sha256:[a-f0-9]{64}$/;
const DOMAIN_LABEL = /^(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])$/;
const HEX = /^[a-f0-9]+$/;

export function parseImageReference(text: unknown): PolicyResult<{ image: ImageReference }> {
  if (typeof text !== 'string' || text === '') return refuse('is empty');
  if (text.length > MAX_IMAGE_REFERENCE_LENGTH)
    return refuse(`is longer than ${MAX_IMAGE_REFERENCE_LENGTH} characters`);
  if (/[^\x21-\x7e]/.test(text)) return refuse('contains whitespace, control or non-ASCII characters');
  if (/^sha256:/i.test(text) || /^[a-f0-9]{64}$/.test(text))
    return refuse('is an image id; name an image by repository and tag or digest');
  const at = text.indexOf('@');
  const nameAndTag = at < 0 ? text : text.slice(0, at);
  const digest = at < 0 ? undefined : text.slice(at + 1);
  if (digest !== undefined && !DIGEST.test(digest))
    return refuse('has an invalid digest (expected @sha256: and 64 lowercase hex digits)');
  const lastSlash = nameAndTag.lastIndexOf('/');
  const tagColon = nameAndTag.indexOf(':', lastSlash + 1);
  const name = tagColon < 0 ? nameAndTag : nameAndTag.slice(0, tagColon);
  const tag = tagColon < 0 ? undefined : nameAndTag.slice(tagColon + 1);
  if (tag !== undefined && !TAG.test(tag))
    return refuse('has an invalid tag (letters, digits, "_", "." and "-", at most 128)');
  if (name.length > MAX_IMAGE_NAME_LENGTH)
    return refuse(`has a name longer than ${MAX_IMAGE_NAME_LENGTH} characters`);
  const components = name.split('/');
  const first = components[0] ?? '';
  const hasDomain =
    components.length > 1 && (first.includes('.') || first.includes(':') || first === 'localhost');
  const pathParts = hasDomain ? components.slice(1) : components;
  for (const part of pathParts) {
    if (part === '') return refuse('has an empty path component (no leading, trailing or double "/")');
    if (!COMPONENT.test(part))
      return refuse(
        `has an invalid path component "${part}" (lowercase letters and digits, separated by ".", "_", "__" or "-")`,
      );
  }
  const path = pathParts.join('/');
  if (/^[a-f0-9]{64}$/.test(path)) return refuse('is an image id; name an image by repository and tag');
  if (!hasDomain && tag === undefined && digest === undefined && HEX.test(path))
    return refuse('looks like an image id prefix; add a tag (e.g. :1) or name a registry');
  const image: ImageReference = { path, text };
  if (hasDomain) {
    const domain = parseDomain(first);
    if (typeof domain === 'string') return refuse(domain);
    Object.assign(image, { domain: first.toLowerCase(), host: domain.host });
    if (domain.port !== undefined) image.port = domain.port;
  }
  if (tag !== undefined) image.tag = tag;
  if (digest !== undefined) image.digest = digest;
  return { ok: true, image };
}

function parseDomain(domain: string): { host: string; port?: number } | string {
  const match = /^(\[[^\]]*\]|[^:]*)(?::([0-9]+))?$/.exec(domain);
  if (!match) return 'has an invalid registry host (expected host or host:port)';
  const [, rawHost = '', rawPort] = match;
  const port = rawPort === undefined ? undefined : Number(rawPort);
  if (port !== undefined && (port < 1 || port > 65535 || String(port) !== rawPort))
    return 'has an invalid registry port';
  if (rawHost.startsWith('[')) {
    const ipv6 = rawHost.slice(1, -1);
    if (isIP(ipv6) !== 6 || ipv6.includes('%')) return 'has an invalid IPv6 registry address';
    return { host: ipv6.toLowerCase(), ...(port !== undefined ? { port } : {}) };
  }
  if (rawHost.length > 253 || !rawHost.split('.').every((label) => DOMAIN_LABEL.test(label)))
    return 'has an invalid registry host';
  return { host: rawHost.toLowerCase(), ...(port !== undefined ? { port } : {}) };
}

/** The repository a reference names, as the engine lists it in RepoTags/RepoDigests. */
export function repositoryOf(image: ImageReference): string {
  return image.domain ? `${image.domain}/${image.path}` : image.path;
}
