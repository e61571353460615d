import { existsSync } from 'node:fs';
import type { WorkerConfig } from '@hostctl/config';
import { OWNER_LABEL } from '@hostctl/domain';
import type { Logger } from 'pino';
import type { ContainerRuntime } from '../adapters/runtime.js';
import type { EgressNodeMarker } from '../adapters/swarm-egress-label.js';
import { swarmGatewayBridge } from '../adapters/swarm-gateway.js';
import { swarmMemberAddresses } from '../adapters/swarm-members.js';
import { parseIpv4Cidrs, type EgressPolicy } from './egress-policy.js';
import { createMachineFirewall } from './machine-firewall.js';
import { createNodesEgress } from './node-egress.js';
import { SANDBOX_BRIDGE_PREFIX } from './sandbox-bridges.js';

export interface WorkerEgressDeps {
  config: Pick<
    WorkerConfig,
    'EGRESS_POLICY' | 'EGRESS_DENY_CIDRS' | 'RUNTIME' | 'SWARM_NODE_COMMAND_IMAGE' | 'SWARM_PROXY_SOURCES'
  >;
  runtime: Pick<ContainerRuntime, 'listNetworks'>;
  /** RUNTIME=swarm: the manager's socket, whose docker_gwbridge carries the tasks of this machine. */
  managerSocket: string;
  /** RUNTIME=swarm: SWARM_NODE_ENGINES, the other nodes the policy is installed on. */
  nodeSockets: ReadonlyMap<string, string>;
  /** RUNTIME=swarm: labels a node whose rules are in, so Swarm may place tasks there (EGRESS_PLACEMENT). */
  markNode?: EgressNodeMarker;
  logger: Logger;
}

/**
 * The worker's egress firewall (docs/security/egress.md): on its own machine, for every bridge
 * carrying tenant code, and under RUNTIME=swarm on the nodes of SWARM_NODE_ENGINES too. The
 * worker's own machine comes first, and a failure there is the worker's (it must not run tenant
 * code unprotected); another node's failure is logged and tried again (node-egress.ts). Under
 * RUNTIME=swarm each node whose rules are in is labelled (the manager's, which is the worker's
 * machine, first), and Swarm places tasks on labelled nodes only (EGRESS_PLACEMENT).
 */
export function createWorkerEgress(deps: WorkerEgressDeps): EgressPolicy {
  const { config } = deps;
  const isSwarmGuarded = config.EGRESS_POLICY === 'enforce' && config.RUNTIME === 'swarm';
  const proxySources = isSwarmGuarded
    ? parseIpv4Cidrs(config.SWARM_PROXY_SOURCES, 'SWARM_PROXY_SOURCES')
    : [];
  const gateway = async () => [await swarmGatewayBridge(deps.managerSocket)];
  // Every member's address, read from the manager at each sweep (nodes join and leave).
  const members =
    config.RUNTIME === 'swarm' ? { memberAddresses: () => swarmMemberAddresses(deps.managerSocket) } : {};
  const local = createMachineFirewall({
    hasIpv6: existsSync('/proc/net/if_inet6'),
    mode: config.EGRESS_POLICY,
    denyCidrs: config.EGRESS_DENY_CIDRS,
    otherBridges: async () => [
      // Service networks created before bridges were named `hct…` keep Docker's `br-…` name.
      ...(await deps.runtime.listNetworks({ [OWNER_LABEL]: 'true' }))
        .map((network) => network.bridge ?? '')
        .filter((bridge) => bridge !== '' && !bridge.startsWith(SANDBOX_BRIDGE_PREFIX)),
      // Swarm tasks reach the host and the outside through the manager's gateway bridge.
      ...(config.RUNTIME === 'swarm' ? await gateway() : []),
    ],
    ...members,
    publishedPorts: { sources: proxySources, bridges: gateway },
  });
  const nodes =
    config.EGRESS_POLICY === 'enforce' && deps.nodeSockets.size > 0
      ? createNodesEgress({
          sockets: deps.nodeSockets,
          image: config.SWARM_NODE_COMMAND_IMAGE,
          denyCidrs: config.EGRESS_DENY_CIDRS,
          proxySources,
          ...members,
          logger: deps.logger,
          ...(deps.markNode ? { markNode: deps.markNode } : {}),
        })
      : undefined;
  return {
    async ensure() {
      await local.ensure();
      if (config.EGRESS_POLICY === 'enforce') await deps.markNode?.(deps.managerSocket);
      await nodes?.ensure();
    },
  };
}
