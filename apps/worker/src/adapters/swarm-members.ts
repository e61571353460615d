import net from 'node:net';
import { createDockerClient } from './docker-client.js';
import { fail } from './docker-errors.js';
import { NODE_ENGINE_TIMEOUT_MS } from './swarm-node-engines.js';

interface MemberInfo {
  Status?: { Addr?: string };
  ManagerStatus?: { Addr?: string };
}

/**
 * The IPv4 addresses of every member of the swarm as the manager's nodes API lists them: each
 * node's `Status.Addr` and, for a manager, the host of `ManagerStatus.Addr` (its 2377 listener;
 * some engines report a manager's `Status.Addr` as 0.0.0.0). The egress policy denies them to
 * tasks on every node (egress-policy.ts), read again at every sweep so a node that joins is
 * covered and one that left is released. IPv6 addresses are left out: tasks have no IPv6, and the
 * ip6tables rules let nothing but replies through the nodes' bridges.
 */
export async function swarmMemberAddresses(managerSocket: string): Promise<string[]> {
  const docker = createDockerClient(managerSocket, { timeoutMs: NODE_ENGINE_TIMEOUT_MS });
  const nodes = (await docker.listNodes().catch(fail('listing swarm nodes'))) as MemberInfo[];
  return memberAddressesOf(nodes);
}

/** The unique, sorted, usable IPv4 addresses of the listed nodes. */
export function memberAddressesOf(nodes: MemberInfo[]): string[] {
  const addresses = nodes.flatMap((node) => [
    node.Status?.Addr ?? '',
    hostOf(node.ManagerStatus?.Addr ?? ''),
  ]);
  return [...new Set(addresses.filter((address) => net.isIPv4(address) && address !== '0.0.0.0'))].sort();
}

/** `10.0.0.1:2377` → `10.0.0.1`. */
function hostOf(hostPort: string): string {
  const separator = hostPort.lastIndexOf(':');
  return separator < 0 ? hostPort : hostPort.slice(0, separator);
}

/** How many nodes the swarm has, down ones included (a node that left is gone once removed). */
export async function swarmNodeCount(managerSocket: string): Promise<number> {
  const docker = createDockerClient(managerSocket, { timeoutMs: NODE_ENGINE_TIMEOUT_MS });
  return ((await docker.listNodes().catch(fail('listing swarm nodes'))) as unknown[]).length;
}
