import { isAllowlisted, normalizeHost } from './allowed-hosts.js';
import { checkHostSyntax, checkPublicTarget, type GitUrlOptions } from './git-url.policy.js';
import { refuse, type PolicyResult } from './policy-result.js';
import { protectedEndpointAt } from './protected-endpoints.js';

/** Where the platform connects for a tenant (a notification receiver, a backup bucket). */
export interface DialedEndpoint {
  scheme: 'https' | 'http';
  /** Normalised: lower case, IPv6 without brackets. */
  host: string;
  port: number;
  isAllowlisted: boolean;
}

const DEFAULT_PORTS = { https: 443, http: 80 } as const;

/**
 * The host policy of every URL a tenant gives the platform to dial, once its scheme and shape are
 * checked: a control-plane endpoint never; unless the host is in `allowlist` (the setting's name,
 * quoted in refusals), https only and a public host only. One checker, so the guards of the
 * features that dial cannot drift apart.
 */
export function checkDialedEndpoint(
  url: URL,
  scheme: 'https' | 'http',
  allowlist: string,
  options: GitUrlOptions,
): PolicyResult<{ endpoint: DialedEndpoint }> {
  const hostProblem = checkHostSyntax(url.hostname);
  if (hostProblem) return refuse(hostProblem);
  const host = normalizeHost(url.hostname);
  const defaultPort = DEFAULT_PORTS[scheme];
  const port = url.port === '' ? defaultPort : Number(url.port);
  const endpoint = protectedEndpointAt(host, port, options.protectedEndpoints ?? []);
  if (endpoint)
    return refuse(`points at a control-plane endpoint (port ${endpoint.port}), which is never allowed`);
  const allowlisted = isAllowlisted(host, port, defaultPort, options.allowedHosts);
  if (!allowlisted) {
    if (scheme === 'http') return refuse(`http:// is only allowed for hosts in ${allowlist}; use https://`);
    const targetProblem = checkPublicTarget(host, allowlist);
    if (targetProblem) return refuse(targetProblem);
  }
  return { ok: true, endpoint: { scheme, host, port, isAllowlisted: allowlisted } };
}
