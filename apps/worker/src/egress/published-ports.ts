import type { Iptables } from '../adapters/iptables.js';
import { ensureFirstRule, type EgressPolicy } from './egress-policy.js';

const PUBLISHED_CHAIN = 'HOSTCTL-PUBLISHED';

/**
 * Under RUNTIME=swarm a web task publishes its port in host mode on its node (there is no routing
 * mesh without IPVS), and this engine's API (1.41) takes no host address for it: Docker listens on
 * every address of the node, the public one too, so anyone could dial a task directly and bypass
 * the proxy. With SWARM_PROXY_SOURCES set, new connections forwarded into the node's
 * docker_gwbridge through a published port (conntrack state DNAT) are dropped unless they come
 * from one of those sources (the proxy's and the worker's addresses as the nodes see them).
 * Connections the node itself opens (the proxy and the worker on the manager's machine) are not
 * forwarded, and tasks reach each other over their overlay: neither passes here.
 */
export function publishedPortsRuleset(sources: string[]): string {
  return [
    '*filter',
    `:${PUBLISHED_CHAIN} - [0:0]`,
    `-A ${PUBLISHED_CHAIN} -m conntrack --ctstate RELATED,ESTABLISHED -j RETURN`,
    ...sources.map((source) => `-A ${PUBLISHED_CHAIN} -s ${source} -j RETURN`),
    `-A ${PUBLISHED_CHAIN} -m conntrack --ctstate DNAT -j DROP`,
    `-A ${PUBLISHED_CHAIN} -j RETURN`,
    'COMMIT',
    '',
  ].join('\n');
}

/** Installs the chain and its jump for each bridge carrying published task ports; idempotent. */
export function createPublishedPortsGuard(options: {
  iptables: Iptables;
  /** SWARM_PROXY_SOURCES, parsed (parseIpv4Cidrs). */
  sources: string[];
  /** The node's docker_gwbridge (swarmGatewayBridge). */
  bridges: () => Promise<string[]>;
}): EgressPolicy {
  const ruleset = publishedPortsRuleset(options.sources);
  return {
    async ensure() {
      await options.iptables.restore(ruleset);
      for (const bridge of await options.bridges())
        await ensureFirstRule(options.iptables, 'DOCKER-USER', ['-o', bridge, '-j', PUBLISHED_CHAIN]);
    },
  };
}
