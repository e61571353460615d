import { createIptables, type ProgramRunner } from '../adapters/iptables.js';
import { createEgressPolicy, type EgressPolicy, type EgressPolicyOptions } from './egress-policy.js';
import { createPublishedPortsGuard } from './published-ports.js';

/**
 * Everything the worker writes into one machine's firewall, its own (child processes) or a swarm
 * node's (a node command as the runner): the egress policy (egress-policy.ts) and, with
 * SWARM_PROXY_SOURCES, the guard of the ports its tasks publish (published-ports.ts).
 */
export function createMachineFirewall(options: {
  /** Default: child processes of the worker. */
  runner?: ProgramRunner;
  /** The machine has IPv6: ip6tables rules too. */
  hasIpv6: boolean;
  mode: EgressPolicyOptions['mode'];
  /** EGRESS_DENY_CIDRS, raw. */
  denyCidrs: string;
  otherBridges: () => Promise<string[]>;
  /** RUNTIME=swarm: every swarm member's address, denied to tasks (egress-policy.ts). */
  memberAddresses?: () => Promise<string[]>;
  /** SWARM_PROXY_SOURCES, parsed, and the machine's docker_gwbridge; none: the ports stay open. */
  publishedPorts?: { sources: string[]; bridges: () => Promise<string[]> };
}): EgressPolicy {
  const runner = options.runner ? { runner: options.runner } : {};
  const iptables = createIptables(runner);
  const egress = createEgressPolicy({
    iptables,
    ...(options.hasIpv6
      ? { ip6tables: createIptables({ binary: 'ip6tables', restoreBinary: 'ip6tables-restore', ...runner }) }
      : {}),
    mode: options.mode,
    denyCidrs: options.denyCidrs,
    otherBridges: options.otherBridges,
    ...(options.memberAddresses ? { memberAddresses: options.memberAddresses } : {}),
  });
  const published =
    options.publishedPorts && options.publishedPorts.sources.length > 0
      ? createPublishedPortsGuard({ iptables, ...options.publishedPorts })
      : undefined;
  return {
    async ensure() {
      await egress.ensure();
      await published?.ensure();
    },
  };
}
