import { isAllowlisted, normalizeHost, type AllowedHost } from './allowed-hosts.js';
import { isIpLiteral, nonPublicKind } from './ip-ranges.js';
import { refuse, type PolicyResult } from './policy-result.js';
import { protectedEndpointAt, type Endpoint } from './protected-endpoints.js';

/**
 * The repository URLs a tenant may give (git_url, ai_url). Everything here is checked without any
 * network access, so the API can refuse at create time; the worker repeats it and then resolves
 * the host (host.policy.ts). The URL reaches git as one argument after `--`, never through a
 * shell, but git itself interprets it, hence the strictness:
 *  - https:// and ssh:// (or scp-like `git@host:org/repo.git`) only; http:// and git:// only for
 *    allowlisted hosts; `ext::`/`fd::` transports, file://, local paths are refused (they run
 *    commands or read the worker's disk);
 *  - no credentials (a token in a URL ends up in logs and in the service detail); ssh may name a
 *    user, never a password;
 *  - canonical hosts only: `0x7f.1` or `2130706433` would reach loopback through inet_aton;
 *  - loopback, private and `*.localhost` hosts, and single-label names (resolved through search
 *    domains into the internal network) only when allowlisted, host *and* port (allowed-hosts.ts);
 *  - never the control plane's own endpoints, allowlisted or not (protected-endpoints.ts);
 *  - no leading `-` anywhere git could read it as an option, no query, fragment, `..`, whitespace,
 *    control or non-ASCII characters, bounded length.
 */
export const MAX_GIT_URL_LENGTH = 2048;

export type GitScheme = 'https' | 'ssh' | 'http' | 'git';

export interface GitUrl {
  scheme: GitScheme;
  /** Normalised: lower case, IPv6 without brackets. */
  host: string;
  port?: number;
  isAllowlisted: boolean;
}

export interface GitUrlOptions {
  allowedHosts: readonly AllowedHost[];
  /** The control plane's endpoints (protectedEndpoints()); refused even when allowlisted. */
  protectedEndpoints?: readonly Endpoint[];
}

export const GIT_DEFAULT_PORTS: Record<GitScheme, number> = { https: 443, ssh: 22, http: 80, git: 9418 };

const URL_FORM =
  /^([a-z][a-z0-9+.-]*):\/\/(?:([^@/?#]*)@)?(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::([0-9]{1,5}))?(\/[^?#]*)?$/i;
// git treats `[user@]host:path` as ssh when no slash comes before the colon.
const SCP_FORM = /^(?:([^@/:]+)@)?(\[[^\]/]*\]|[^@/:[\]]+):(.+)$/;
const PATH_CHARS = /^[A-Za-z0-9._~%+@:/,=-]*$/;
const USER = /^[A-Za-z0-9._][A-Za-z0-9._-]{0,63}$/;
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

export function checkGitUrl(url: string, options: GitUrlOptions): PolicyResult<{ url: GitUrl }> {
  if (typeof url !== 'string' || url.length === 0) return refuse('is empty');
  if (url.length > MAX_GIT_URL_LENGTH) return refuse(`is longer than ${MAX_GIT_URL_LENGTH} characters`);
  if (/[^\x21-\x7e]/.test(url))
    return refuse('contains whitespace, control or non-ASCII characters (percent-encode the path)');
  if (url.startsWith('-')) return refuse('must not start with "-"');
  if (/^[a-z0-9+.-]*::/i.test(url))
    return refuse('uses a git remote-helper transport (such as ext::), which is not allowed');

  const declared = /^([a-z][a-z0-9+.-]*):\/\//i.exec(url)?.[1]?.toLowerCase();
  if (declared !== undefined && !['https', 'ssh', 'http', 'git'].includes(declared))
    return refuse(`scheme ${declared}:// is not allowed; use https:// or ssh://`);
  const isUrlForm = URL_FORM.exec(url);
  if (isUrlForm) {
    const [, rawScheme = '', userinfo, rawHost = '', rawPort, path = ''] = isUrlForm;
    const scheme = rawScheme.toLowerCase() as GitScheme;
    if (userinfo !== undefined) {
      if (scheme !== 'ssh') return refuse('must not contain credentials (user or token before "@")');
      if (userinfo.includes(':')) return refuse('must not contain a password');
      if (!USER.test(userinfo)) return refuse('has an invalid user name');
    }
    const port = rawPort === undefined ? undefined : Number(rawPort);
    if (port !== undefined && (port < 1 || port > 65535 || rawPort !== String(port)))
      return refuse('has an invalid port');
    return finish(scheme, rawHost, port, path.replace(/^\//, ''), options);
  }
  if (declared !== undefined)
    return refuse('is not a valid repository URL (expected https://host/path, without query or fragment)');

  const isScpForm = SCP_FORM.exec(url);
  if (isScpForm && !url.startsWith('/') && !url.startsWith('.') && !url.startsWith('~')) {
    const [, user, rawHost = '', path = ''] = isScpForm;
    if (user !== undefined && !USER.test(user)) return refuse('has an invalid user name');
    return finish('ssh', rawHost, undefined, path, options);
  }
  return refuse('must be an https:// or ssh:// repository URL (local paths are not allowed)');
}

function finish(
  scheme: GitScheme,
  rawHost: string,
  port: number | undefined,
  path: string,
  options: GitUrlOptions,
): PolicyResult<{ url: GitUrl }> {
  const hostProblem = checkHostSyntax(rawHost);
  if (hostProblem) return refuse(hostProblem);
  const pathProblem = checkPath(path);
  if (pathProblem) return refuse(pathProblem);
  const host = normalizeHost(rawHost);
  const defaultPort = GIT_DEFAULT_PORTS[scheme];
  const endpoint = protectedEndpointAt(host, port ?? defaultPort, options.protectedEndpoints ?? []);
  if (endpoint)
    return refuse(`points at a control-plane endpoint (port ${endpoint.port}), which is never allowed`);
  const allowlisted = isAllowlisted(host, port, defaultPort, options.allowedHosts);
  if (!allowlisted) {
    if (scheme === 'http' || scheme === 'git')
      return refuse(`${scheme}:// is only allowed for hosts in GIT_ALLOWED_HOSTS; use https:// or ssh://`);
    const targetProblem = checkPublicTarget(host, 'GIT_ALLOWED_HOSTS');
    if (targetProblem) return refuse(targetProblem);
  }
  return {
    ok: true,
    url: { scheme, host, ...(port !== undefined ? { port } : {}), isAllowlisted: allowlisted },
  };
}

/** Host names and IP literals as a URL may hold them; refuses inet_aton shorthands. */
export function checkHostSyntax(rawHost: string): string | null {
  if (rawHost.startsWith('[')) {
    return isIpLiteral(rawHost.slice(1, -1)) ? null : 'has an invalid IPv6 address';
  }
  const host = rawHost.toLowerCase().replace(/\.$/, '');
  if (isIpLiteral(host)) return null;
  if (host.length === 0 || host.length > 253) return 'has an invalid host name';
  const labels = host.split('.');
  if (!labels.every((label) => LABEL.test(label))) return 'has an invalid host name';
  // A numeric or hex last label is an IPv4 shorthand (127.1, 0x7f.1, 2130706433) to resolvers.
  if (/^(0x[0-9a-f]*|[0-9]+)$/.test(labels[labels.length - 1] ?? ''))
    return 'has a host that is not a canonical IP address or name';
  return null;
}

function checkPath(path: string): string | null {
  if (path === '' || path === '/') return 'names no repository path';
  if (!PATH_CHARS.test(path)) return 'has characters that are not allowed in the repository path';
  if (path.startsWith('-') || path.includes('/-')) return 'has a path segment starting with "-"';
  if (path.split('/').some((segment) => segment === '..')) return 'must not contain ".." path segments';
  return null;
}

/** Targets that are never public, decided without DNS (the worker also resolves names). */
export function checkPublicTarget(host: string, allowlist: string): string | null {
  if (isIpLiteral(host)) {
    const kind = nonPublicKind(host);
    return kind ? `points at a ${kind} address; only public hosts or ${allowlist} are allowed` : null;
  }
  if (host === 'localhost' || host.endsWith('.localhost'))
    return `points at localhost; only public hosts or ${allowlist} are allowed`;
  if (!host.includes('.'))
    return `must use a fully qualified host name (single-label names are only allowed in ${allowlist})`;
  return null;
}
