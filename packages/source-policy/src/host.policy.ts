import { lookup as dnsLookup } from 'node:dns/promises';
import { normalizeHost } from './allowed-hosts.js';
import { isIpLiteral, nonPublicKind } from './ip-ranges.js';
import { refuse, type PolicyResult } from './policy-result.js';

/**
 * The network half of the SSRF guard, run by the worker right before it fetches: resolve the
 * host and refuse when *any* address is not public (a name with one public and one internal
 * address is still a way in). Allowlisted hosts (the caller decides, host and port) skip it. The caller pins the
 * addresses it got for the fetch where the transport allows it (https), so a second resolution
 * by git cannot be rebound to an internal address.
 */
export type Lookup = (host: string) => Promise<{ address: string; family: number }[]>;

export interface HostCheckOptions {
  /** Injected in tests; defaults to the system resolver (getaddrinfo, like git itself). */
  lookup?: Lookup;
  timeoutMs?: number;
  /** Named in refusals so the operator knows which list would admit the host. */
  allowlistName?: string;
}

export interface ResolvedHost {
  host: string;
  isAllowlisted: boolean;
  /** Public addresses of the host; empty for allowlisted hosts (not resolved). */
  addresses: string[];
}

const systemLookup: Lookup = (host) => dnsLookup(host, { all: true, verbatim: true });

export async function resolveAndCheckHost(
  rawHost: string,
  isAllowlisted: boolean,
  options: HostCheckOptions = {},
): Promise<PolicyResult<{ resolved: ResolvedHost }>> {
  const host = normalizeHost(rawHost);
  if (isAllowlisted) return { ok: true, resolved: { host, isAllowlisted: true, addresses: [] } };
  let addresses: string[];
  if (isIpLiteral(host)) {
    addresses = [host];
  } else {
    try {
      addresses = (await withTimeout((options.lookup ?? systemLookup)(host), options.timeoutMs ?? 5000)).map(
        (entry) => entry.address,
      );
    } catch (error) {
      return refuse(`host ${host} cannot be resolved: ${(error as Error).message}`);
    }
  }
  if (addresses.length === 0) return refuse(`host ${host} has no addresses`);
  for (const address of addresses) {
    const kind = nonPublicKind(address);
    if (kind)
      return refuse(
        `host ${host} resolves to a ${kind} address (${address}); add it to ${options.allowlistName ?? 'GIT_ALLOWED_HOSTS'} if it is trusted`,
      );
  }
  return { ok: true, resolved: { host, isAllowlisted: false, addresses } };
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
