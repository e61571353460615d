import type { Logger } from 'pino';
import { createNodeCommand, type NodeCommand } from '../adapters/node-command.js';
import { swarmGatewayBridge } from '../adapters/swarm-gateway.js';
import type { EgressNodeMarker } from '../adapters/swarm-egress-label.js';
import { NODE_ENGINE_TIMEOUT_MS } from '../adapters/swarm-node-engines.js';
import type { EgressPolicy } from './egress-policy.js';
import { createMachineFirewall } from './machine-firewall.js';

/** A node whose rules are in is checked again after this long: a reboot or a firewall reload drops them. */
const NODE_RECHECK_MS = 60_000;

interface NodesEgressOptions {
  /** SWARM_NODE_ENGINES: node hostname → its engine's socket. */
  sockets: ReadonlyMap<string, string>;
  /** SWARM_NODE_COMMAND_IMAGE. */
  image: string;
  /** EGRESS_DENY_CIDRS, raw. */
  denyCidrs: string;
  /** SWARM_PROXY_SOURCES, parsed: with any, published task ports are closed to other sources. */
  proxySources?: string[];
  /**
   * The swarm members' addresses (swarm-members.ts), denied to tasks on every node. Read once per
   * sweep; a node whose rules hold another list than the current one is rewritten at once, not
   * after its recheck interval, so a node that joined is off-limits from the next sweep on.
   */
  memberAddresses?: () => Promise<string[]>;
  logger: Logger;
  recheckMs?: number;
  /** Called once a node's rules are in (worker-egress.ts labels it for Swarm's placement). */
  markNode?: EgressNodeMarker;
}

/**
 * The egress policy on the swarm's other nodes (docs/security/egress.md#other-nodes): the same
 * chains and jumps egress-policy.ts installs on the worker's machine, for the node's
 * docker_gwbridge, written by the node's own iptables through a node command (node-command.ts),
 * and with SWARM_PROXY_SOURCES the guard of its published task ports (published-ports.ts).
 * A node that cannot be reached is logged and tried again at the next sweep; it never stops the
 * worker, whose own machine's policy is installed first and does not depend on it.
 */
export function createNodesEgress(options: NodesEgressOptions): EgressPolicy {
  const nodes = [...options.sockets].map(([hostname, socketPath]) => {
    const command = createNodeCommand({
      socketPath,
      image: options.image,
      timeoutMs: NODE_ENGINE_TIMEOUT_MS,
    });
    return {
      hostname,
      socketPath,
      command,
      policy: undefined as EgressPolicy | undefined,
      ensuredAt: 0,
      /** The member list its rules were last written with. */
      members: '',
    };
  });
  // This sweep's member list: every node's rules are written from one reading.
  let members: string[] = [];

  const policyOf = async (node: (typeof nodes)[number]): Promise<EgressPolicy> => {
    const gateway = async () => [await swarmGatewayBridge(node.socketPath)];
    return (node.policy ??= createMachineFirewall({
      runner: node.command,
      hasIpv6: await hasIpv6(node.command),
      mode: 'enforce',
      denyCidrs: options.denyCidrs,
      otherBridges: gateway,
      ...(options.memberAddresses ? { memberAddresses: async () => members } : {}),
      publishedPorts: { sources: options.proxySources ?? [], bridges: gateway },
    }));
  };

  return {
    async ensure() {
      // Not readable (the manager is down): the nodes keep the rules of the last list read.
      if (options.memberAddresses)
        members = await options.memberAddresses().catch((error: unknown) => {
          options.logger.warn({ err: error }, 'cannot read the swarm members; their last list stays denied');
          return members;
        });
      const current = members.join(',');
      const due = nodes.filter(
        (node) =>
          node.members !== current || Date.now() - node.ensuredAt >= (options.recheckMs ?? NODE_RECHECK_MS),
      );
      await Promise.all(
        due.map(async (node) => {
          try {
            await (await policyOf(node)).ensure();
            await options.markNode?.(node.socketPath);
            node.ensuredAt = Date.now();
            node.members = current;
          } catch (error) {
            options.logger.warn(
              { node: node.hostname, err: error },
              'cannot install the egress policy on a swarm node; tried again at the next sweep',
            );
          }
        }),
      );
    },
  };
}

/** Whether the node has IPv6 (the file lists the interfaces' IPv6 addresses of its network namespace). */
async function hasIpv6(command: NodeCommand): Promise<boolean> {
  return (await command(['test', '-e', '/proc/net/if_inet6'])).code === 0;
}
