import { BlockList, isIP } from 'node:net';

/**
 * Address ranges a git fetch must never reach unless the operator allowlisted the host: the
 * worker runs next to the control plane's databases, the Docker socket's neighbours and cloud
 * metadata endpoints (169.254.169.254). Documentation and benchmark ranges are refused as well:
 * nothing legitimate lives there. IPv4-mapped IPv6 addresses are checked as the IPv4 they carry.
 */
const RANGES: [kind: string, cidrs: string[]][] = [
  ['unspecified', ['0.0.0.0/8', '::/128']],
  ['loopback', ['127.0.0.0/8', '::1/128']],
  ['private', ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10']],
  ['link-local', ['169.254.0.0/16', 'fe80::/10']],
  ['unique-local', ['fc00::/7', 'fec0::/10']],
  ['multicast', ['224.0.0.0/4', 'ff00::/8']],
  [
    'reserved',
    [
      '192.0.0.0/24',
      '192.0.2.0/24',
      '192.88.99.0/24',
      '198.18.0.0/15',
      '198.51.100.0/24',
      '203.0.113.0/24',
      '240.0.0.0/4',
      // IPv4-compatible, NAT64, discard, IETF/Teredo, documentation, 6to4: each can smuggle an
      // internal IPv4 address or is never a real git host.
      '::/96',
      '64:ff9b::/96',
      '64:ff9b:1::/48',
      '100::/64',
      '2001::/23',
      '2001:db8::/32',
      '2002::/16',
    ],
  ],
];

const LISTS = RANGES.map(([kind, cidrs]) => {
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [network = '', prefix = ''] = cidr.split('/');
    list.addSubnet(network, Number(prefix), isIP(network) === 6 ? 'ipv6' : 'ipv4');
  }
  return { kind, list };
});

/** The kind of non-public range `address` is in ("loopback", "private", …), or null when public. */
export function nonPublicKind(address: string): string | null {
  const family = isIP(address);
  if (family === 0) return 'invalid';
  const type = family === 6 ? 'ipv6' : 'ipv4';
  return LISTS.find(({ list }) => list.check(address, type))?.kind ?? null;
}

/** Dotted-quad IPv4 without leading zeros or shorthand, or an IPv6 address (no zone id). */
export function isIpLiteral(host: string): boolean {
  return isIP(host) !== 0 && !host.includes('%');
}
