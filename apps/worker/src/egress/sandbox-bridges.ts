import { createHash } from 'node:crypto';

/**
 * Interface names of the Linux bridges that carry tenant code: one per service network and one
 * for builds. They share a prefix so the egress policy matches all of them with one iptables
 * interface wildcard (`-i hct+`), which a container cannot spoof the way it can spoof a source
 * address, and which covers a network the moment Docker creates it (no per-network rule to race).
 * Linux caps interface names at 15 characters: `hct` + 12 hex digits (see setBridge).
 */
export const SANDBOX_BRIDGE_PREFIX = 'hct';

export const BUILD_NETWORK = 'hostctl-build';
export const BUILD_BRIDGE = `${SANDBOX_BRIDGE_PREFIX}build`;

/**
 * The bridge of one deployment's network (each container set has its own, so two releases of a
 * service can run side by side during a cutover): 12 hex digits of a hash of both ids, stable
 * across retries, so a resumed job finds the network it created.
 */
export function setBridge(serviceId: string, deploymentId: string): string {
  const digest = createHash('sha256').update(`${serviceId}/${deploymentId}`).digest('hex');
  return SANDBOX_BRIDGE_PREFIX + digest.slice(0, 12);
}

/** Docker's own name for a user-defined bridge created without a name option. */
export function defaultBridgeName(networkId: string): string {
  return `br-${networkId.slice(0, 12)}`;
}
