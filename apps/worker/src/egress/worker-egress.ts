import { existsSync } from 'node:fs';
import type { WorkerConfig } from '@hostctl/config';
import { OWNER_LABEL } from '@hostctl/domain';
import type { Logger } from 'pino';
import type { ContainerRuntime } from '../adapters/runtime.js';
import type { EgressNodeMarker } from '../adapters/swarm-egress-label.js';
import { parseIpv4Cidrs, type EgressPolicy } from './egress-policy.js';
import { createMachineFirewall } from './machine-firewall.js';
import { createNodesEgress } from './node-egress.js';
import { SANDBOX_BRIDGE_PREFIX } from './sandbox-bridges.js';

export interface WorkerEgressDeps {
  config: Pick<
    WorkerConfig,
    'EGRESS_POLICY' | 'EGRESS_DENY_CIDRS' | 'SWARM_NODE_COMMAND_IMAGE' | 'SWARM_PROXY_SOURCES'
  >;
  runtime: Pick<ContainerRuntime, 'listNetworks'>;
  /** Where tenant code runs beyond this engine's own networks; absent: nowhere else (one engine). */
  reach?: EgressReach;
  logger: Logger;
}

/** Under RUNTIME=swarm (runtime/runtime-wiring.ts): the swarm's members, bridges and other nodes. */
export interface EgressReach {
  /** This machine's bridges that carry tasks (the manager's docker_gwbridge). */
  bridges(): Promise<string[]>;
  /** Every member's address, read at each sweep (nodes join and leave); denied to tasks. */
  memberAddresses(): Promise<string[]>;
  /** The other nodes' engines (SWARM_NODE_ENGINES), where the policy is installed too. */
  nodeSockets: ReadonlyMap<string, string>;
  /** Labels the node behind a socket once its rules are in, so Swarm may place tasks there (EGRESS_PLACEMENT). */
  markNode: EgressNodeMarker;
  /** This machine's own node (the manager's socket), labelled first. */
  ownSocket: string;
}

/**
 * The worker's egress firewall (docs/security/egress.md): on its own machine, for every bridge
 * carrying tenant code, and where `reach` says tenant code also runs (RUNTIME=swarm: the nodes of
 * SWARM_NODE_ENGINES). The worker's own machine comes first, and a failure there is the worker's
 * (it must not run tenant code unprotected); another node's failure is logged and tried again
 * (node-egress.ts). Each node whose rules are in is labelled (this machine's first), and Swarm
 * places tasks on labelled nodes only (EGRESS_PLACEMENT).
 */
export function createWorkerEgress(deps: WorkerEgressDeps): EgressPolicy {
  const { config, reach } = deps;
  const isEnforced = config.EGRESS_POLICY === 'enforce';
  // Published ports are opened on other nodes' addresses: only the proxy's sources may reach them.
  const proxySources =
    isEnforced && reach ? parseIpv4Cidrs(config.SWARM_PROXY_SOURCES, 'SWARM_PROXY_SOURCES') : [];
  const bridges = async () => (reach ? reach.bridges() : []);
  const members = reach ? { memberAddresses: () => reach.memberAddresses() } : {};
  const local = createMachineFirewall({
    hasIpv6: existsSync('/proc/net/if_inet6'),
    mode: config.EGRESS_POLICY,
    denyCidrs: config.EGRESS_DENY_CIDRS,
    otherBridges: async () => [
      // Service networks created before bridges were named `hct…` keep Docker's `br-…` name.
      ...(await deps.runtime.listNetworks({ [OWNER_LABEL]: 'true' }))
        .map((network) => network.bridge ?? '')
        .filter((bridge) => bridge !== '' && !bridge.startsWith(SANDBOX_BRIDGE_PREFIX)),
      // Tasks reach the host and the outside through the bridges `reach` names.
      ...(await bridges()),
    ],
    ...members,
    publishedPorts: { sources: proxySources, bridges },
  });
  const nodes =
    isEnforced && reach && reach.nodeSockets.size > 0
      ? createNodesEgress({
          sockets: reach.nodeSockets,
          image: config.SWARM_NODE_COMMAND_IMAGE,
          denyCidrs: config.EGRESS_DENY_CIDRS,
          proxySources,
          ...members,
          logger: deps.logger,
          markNode: reach.markNode,
        })
      : undefined;
  return {
    async ensure() {
      await local.ensure();
      if (isEnforced) await reach?.markNode(reach.ownSocket);
      await nodes?.ensure();
    },
  };
}
