import { existsSync } from 'node:fs';
import net from 'node:net';
import { IptablesError, type Iptables } from '../adapters/iptables.js';
import { BUILD_BRIDGE, SANDBOX_BRIDGE_PREFIX } from './sandbox-bridges.js';

/**
 * The egress policy for tenant code: service containers and build RUN steps (on bridges named
 * `hct…`) and Swarm tasks (through the swarm engine's docker_gwbridge) cannot open connections
 * to the host itself (every local address: the bridge gateways, the public address, anything
 * bound to 0.0.0.0 such as Redis, PostgreSQL, Caddy's admin API or PowerDNS's), to another
 * container through a published port (DNAT), to link-local 169.254.0.0/16 (cloud metadata), under
 * RUNTIME=swarm to any swarm member's address or the swarm's own ports, or to the operator's
 * EGRESS_DENY_CIDRS.
 * Replies of connections the host opened (Caddy → service, health probes) stay allowed, and so does
 * DNS: Docker's resolver 127.0.0.11 lives inside the container's own network namespace.
 *
 * Two chains of our own, rewritten atomically on every sync and jumped to from the chains Docker
 * leaves to the operator:
 * - HOSTCTL-EGRESS from DOCKER-USER (FORWARD: traffic leaving the host through it),
 * - HOSTCTL-HOST from INPUT (traffic to the host itself: nothing but replies).
 */
export const EGRESS_CHAIN = 'HOSTCTL-EGRESS';
export const HOST_CHAIN = 'HOSTCTL-HOST';
const LINK_LOCAL = '169.254.0.0/16';

export interface EgressPolicy {
  /** Installs what is missing; idempotent, safe to call every reconciler sweep. */
  ensure(): Promise<void>;
}

export interface EgressPolicyOptions {
  iptables: Iptables;
  /**
   * ip6tables, when the kernel has IPv6. Docker disables IPv6 inside containers of IPv4-only
   * networks (ours), but the bridges carry fe80:: addresses of the host: replies only, both ways.
   */
  ip6tables?: Iptables;
  mode: 'enforce' | 'off';
  /** EGRESS_DENY_CIDRS, raw. */
  denyCidrs: string;
  /**
   * Bridges carrying tenant code that are not named `hct…`: service networks created before
   * bridges were (upgrades), and under RUNTIME=swarm the swarm engine's docker_gwbridge.
   */
  otherBridges?: () => Promise<string[]>;
  /**
   * RUNTIME=swarm: the addresses of every swarm member (swarm-members.ts), read at every sync.
   * Given, tasks are also denied those addresses and the swarm's own ports anywhere.
   */
  memberAddresses?: () => Promise<string[]>;
}

export class EgressPolicyError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'EgressPolicyError';
  }
}

/** IPv4 addresses and ranges of a comma-separated variable (EGRESS_DENY_CIDRS, SWARM_PROXY_SOURCES). */
export function parseIpv4Cidrs(raw: string, variable: string): string[] {
  const cidrs = raw
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  for (const cidr of cidrs) {
    const [address = '', bits, ...extra] = cidr.split('/');
    const prefix = bits === undefined ? 32 : Number(bits);
    if (extra.length > 0 || !net.isIPv4(address) || !Number.isInteger(prefix) || prefix < 0 || prefix > 32)
      throw new EgressPolicyError(
        `${variable}: "${cidr}" is not an IPv4 address or CIDR range (IPv6 needs ip6tables rules: docs/security/egress.md)`,
      );
  }
  return cidrs;
}

/** ip6tables: tenant networks are IPv4-only, so nothing but replies, to the host or through it. */
export function egressRuleset6(): string {
  return [
    '*filter',
    `:${HOST_CHAIN} - [0:0]`,
    `-A ${HOST_CHAIN} -m conntrack --ctstate RELATED,ESTABLISHED -j RETURN`,
    `-A ${HOST_CHAIN} -j REJECT`,
    'COMMIT',
    '',
  ].join('\n');
}

/**
 * The ports a swarm's members talk to each other on: 2377/tcp (managers' control API), 7946/tcp
 * and udp (gossip: membership and the overlays' address tables), 4789/udp (VXLAN: a datagram sent
 * there is decapsulated into the overlay its VNI names, another tenant's included).
 */
const SWARM_PORTS = [
  ['tcp', '2377'],
  ['tcp', '7946'],
  ['udp', '7946'],
  ['udp', '4789'],
] as const;

const REJECT = ['-j', 'REJECT', '--reject-with', 'icmp-port-unreachable'];

/**
 * Under RUNTIME=swarm a node's own addresses (addrtype LOCAL) are not enough: every node is also
 * the way into the others (their published task ports around the proxy, whose source address a
 * task on the proxy's node shares once masqueraded; the managers' control port; a registry or
 * anything else listening there). So every member's address is refused, and the swarm's ports
 * whatever the address (a member may have addresses the nodes API does not list).
 */
function swarmRules(members: string[]): string[][] {
  return [
    ...SWARM_PORTS.map(([protocol, port]) => ['-p', protocol, '--dport', port, ...REJECT]),
    ...members.map((address) => ['-d', address, ...REJECT]),
  ];
}

/**
 * The iptables-restore input that (re)writes both chains; `members` (RUNTIME=swarm): the swarm
 * members' addresses, denied with the swarm's ports.
 */
export function egressRuleset(denyCidrs: string[], members?: string[]): string {
  const reject = REJECT;
  const egress = [
    ['-m', 'conntrack', '--ctstate', 'RELATED,ESTABLISHED', '-j', 'RETURN'],
    ['-d', LINK_LOCAL, ...reject],
    // A published port reached through a host address is DNAT-ed to another container: refused too.
    ['-m', 'conntrack', '--ctstate', 'DNAT', ...reject],
    ['-m', 'addrtype', '--dst-type', 'LOCAL', ...reject],
    ...(members ? swarmRules(members) : []),
    ...denyCidrs.map((cidr) => ['-d', cidr, ...reject]),
    ['-j', 'RETURN'],
  ];
  const host = [['-m', 'conntrack', '--ctstate', 'RELATED,ESTABLISHED', '-j', 'RETURN'], reject];
  const lines = [
    '*filter',
    `:${EGRESS_CHAIN} - [0:0]`,
    `:${HOST_CHAIN} - [0:0]`,
    ...egress.map((rule) => ['-A', EGRESS_CHAIN, ...rule].join(' ')),
    ...host.map((rule) => ['-A', HOST_CHAIN, ...rule].join(' ')),
    'COMMIT',
    '',
  ];
  return lines.join('\n');
}

export function createEgressPolicy(options: EgressPolicyOptions): EgressPolicy {
  const denyCidrs = parseIpv4Cidrs(options.denyCidrs, 'EGRESS_DENY_CIDRS');
  const { iptables } = options;
  const ruleset = async () =>
    egressRuleset(denyCidrs, options.memberAddresses ? await options.memberAddresses() : undefined);

  const ensureJump = (parent: string, bridge: string, target: string, tables = iptables) =>
    ensureFirstRule(tables, parent, ['-i', bridge, '-j', target]);

  return {
    async ensure() {
      if (options.mode === 'off') return;
      try {
        // Docker creates DOCKER-USER at start; created here when Docker has not run yet.
        if (!(await iptables.check(['-n', '-L', 'DOCKER-USER']))) await iptables.run(['-N', 'DOCKER-USER']);
        await iptables.restore(await ruleset());
        const bridges = [`${SANDBOX_BRIDGE_PREFIX}+`, ...((await options.otherBridges?.()) ?? [])];
        for (const bridge of bridges) {
          await ensureJump('DOCKER-USER', bridge, EGRESS_CHAIN);
          await ensureJump('INPUT', bridge, HOST_CHAIN);
        }
        const v6 = options.ip6tables;
        if (v6) {
          await v6.restore(egressRuleset6());
          for (const bridge of bridges) {
            await ensureJump('INPUT', bridge, HOST_CHAIN, v6);
            await ensureJump('FORWARD', bridge, HOST_CHAIN, v6);
          }
        }
      } catch (error) {
        if (!(error instanceof IptablesError)) throw error;
        throw new EgressPolicyError(
          `EGRESS_POLICY=enforce: cannot install the egress firewall (${error.message}). The worker needs the iptables and iptables-restore commands, CAP_NET_ADMIN and the host's network namespace (where Docker's bridges are); set EGRESS_POLICY=off only where the host's firewall does the same (docs/security/egress.md).`,
          { cause: error },
        );
      }
    },
  };
}

/** Puts `rule` first in `chain` unless it is there: an operator's earlier ACCEPT must not bypass it. */
export async function ensureFirstRule(tables: Iptables, chain: string, rule: string[]): Promise<void> {
  if (await tables.check(['-C', chain, ...rule])) return;
  await tables.run(['-I', chain, '1', ...rule]);
}

/**
 * Rules written into a network namespace that is not Docker's protect nothing. The build bridge
 * is created by the worker before the first sync, so it must be visible from here.
 */
export function assertDockerNetworkNamespace(sysClassNet = '/sys/class/net'): void {
  if (!existsSync(`${sysClassNet}/${BUILD_BRIDGE}`))
    throw new EgressPolicyError(
      `EGRESS_POLICY=enforce: the build bridge ${BUILD_BRIDGE} is not visible from the worker, so the worker does not share the host's network namespace with Docker and its firewall rules would protect nothing. Run the worker with the host network (network_mode: host) or set EGRESS_POLICY=off and install the rules on the host (docs/security/egress.md).`,
    );
}
