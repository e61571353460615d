import { dockerNamePrefix } from '@hostctl/domain';

/**
 * Interface names of the Linux bridges that carry tenant code: one per service network and one
 * for builds. They share a prefix so the egress policy matches all of them with one iptables
 * interface wildcard (`-i hct+`), which a container cannot spoof the way it can spoof a source
 * address, and which covers a network the moment Docker creates it (no per-network rule to race).
 * Linux caps interface names at 15 characters: `hct` + 12 hex digits of the service id.
 */
export const SANDBOX_BRIDGE_PREFIX = 'hct';

export const BUILD_NETWORK = 'hostctl-build';
export const BUILD_BRIDGE = `${SANDBOX_BRIDGE_PREFIX}build`;

export function serviceBridge(serviceId: string): string {
  return SANDBOX_BRIDGE_PREFIX + dockerNamePrefix(serviceId).replace(/^hostctl-/, '');
}

/** Docker's own name for a user-defined bridge created without a name option. */
export function defaultBridgeName(networkId: string): string {
  return `br-${networkId.slice(0, 12)}`;
}
