/**
 * The operator's allowlist (GIT_ALLOWED_HOSTS, comma-separated host names or IP addresses). An
 * allowlisted host may resolve to loopback or private addresses and may use http:// and git://;
 * that is how tests and private git servers work. Matching is exact (case-insensitive, no
 * wildcards, any port): allowing `git.corp.example` does not allow `evil.git.corp.example`.
 */
export function parseAllowedHosts(csv: string | undefined): string[] {
  return (csv ?? '')
    .split(',')
    .map(normalizeHost)
    .filter((host) => host !== '');
}

/** Lower case, no surrounding brackets (IPv6) and no trailing dot, so equal hosts compare equal. */
export function normalizeHost(host: string): string {
  let out = host.trim().toLowerCase();
  if (out.startsWith('[') && out.endsWith(']')) out = out.slice(1, -1);
  return out.endsWith('.') ? out.slice(0, -1) : out;
}

export function isAllowlisted(host: string, allowedHosts: readonly string[]): boolean {
  const wanted = normalizeHost(host);
  return allowedHosts.some((entry) => normalizeHost(entry) === wanted);
}
