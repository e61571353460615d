import { isIP } from 'node:net';

/**
 * Operator allowlists (GIT_ALLOWED_HOSTS, REGISTRY_ALLOWED_HOSTS): comma-separated entries, each a
 * host *and* the ports it opens. An allowlisted target may be loopback or private (that is how
 * tests, private git servers and the platform registry work), so an entry must never open more
 * than the one service meant: `127.0.0.1` used to open every loopback port, the Caddy admin API
 * and the databases included.
 *  - `host:port` (`127.0.0.1:5000`, `[::1]:5000`) opens that port;
 *  - `host:from-to` (`127.0.0.1:32768-60999`) opens a range (test servers on ephemeral ports);
 *  - a bare `host` opens only the default port of the protocol (443 for a registry, the scheme's
 *    port for git), i.e. references that name no port or that port.
 * Host matching is exact (case-insensitive, no wildcards): allowing `git.corp.example` does not
 * allow `evil.git.corp.example`. A malformed entry is a configuration error, never ignored.
 */
export interface AllowedHost {
  /** Normalised: lower case, IPv6 without brackets, no trailing dot. */
  host: string;
  /** Absent: the protocol's default port only. */
  ports?: { from: number; to: number };
}

export class AllowlistError extends Error {}

const HOST_NAME = /^(?!-)[a-z0-9-]{1,63}(?<!-)(\.(?!-)[a-z0-9-]{1,63}(?<!-))*$/;

export function parseAllowedHosts(csv: string | undefined, variable = 'GIT_ALLOWED_HOSTS'): AllowedHost[] {
  return (csv ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
    .map((entry) => {
      const parsed = parseEntry(entry);
      if (typeof parsed === 'string') throw new AllowlistError(`${variable}: entry "${entry}" ${parsed}`);
      return parsed;
    });
}

function parseEntry(entry: string): AllowedHost | string {
  let host: string;
  let portPart: string | undefined;
  const bracketed = /^\[([^\]]+)\](?::(.+))?$/.exec(entry);
  if (bracketed) {
    host = bracketed[1] ?? '';
    portPart = bracketed[2];
  } else if (isIP(entry) === 6) {
    host = entry; // a bare IPv6 address: no port can be told apart from it
  } else {
    const colon = entry.lastIndexOf(':');
    host = colon < 0 ? entry : entry.slice(0, colon);
    portPart = colon < 0 ? undefined : entry.slice(colon + 1);
  }
  host = normalizeHost(host);
  if (isIP(host) === 0 && !HOST_NAME.test(host)) return 'is not a host name or IP address';
  if (portPart === undefined) return { host };
  const range = /^([0-9]{1,5})(?:-([0-9]{1,5}))?$/.exec(portPart);
  const from = Number(range?.[1]);
  const to = Number(range?.[2] ?? range?.[1]);
  if (!range || from < 1 || to > 65535 || from > to)
    return 'has an invalid port or port range (expected host:port or host:from-to)';
  return { host, ports: { from, to } };
}

/** Lower case, no surrounding brackets (IPv6) and no trailing dot, so equal hosts compare equal. */
export function normalizeHost(host: string): string {
  let out = host.trim().toLowerCase();
  if (out.startsWith('[') && out.endsWith(']')) out = out.slice(1, -1);
  return out.endsWith('.') ? out.slice(0, -1) : out;
}

/**
 * Whether `host` on `port` (undefined: the protocol's default) is allowlisted. `defaultPort` is
 * the port the protocol uses when none is named, so `host:443` and a bare `host` entry agree.
 */
export function isAllowlisted(
  host: string,
  port: number | undefined,
  defaultPort: number,
  allowed: readonly AllowedHost[],
): boolean {
  const wanted = normalizeHost(host);
  const effective = port ?? defaultPort;
  return allowed.some(
    (entry) =>
      entry.host === wanted &&
      (entry.ports
        ? effective >= entry.ports.from && effective <= entry.ports.to
        : effective === defaultPort),
  );
}
