import { DomainError } from '@hostctl/domain';
import type { DnsProvider, DnsReport } from './dns-provider.js';

/**
 * DnsProvider on the PowerDNS HTTP API (the only code talking to it). Ownership is recorded in the
 * rrset's comment, `hostctl-owner service=<serviceId>`, not in a public TXT record: the comment
 * is visible to the API only, and PowerDNS's comment search finds every rrset of a service in
 * every zone (custom domains may have been moved since). A name is only written when it lies in
 * a zone the server has (longest suffix wins) and holds no A/AAAA/CNAME record someone else owns;
 * PATCH with changetype REPLACE/DELETE is idempotent, so a retried job just repeats it.
 */
export interface PowerDnsOptions {
  apiUrl: string;
  apiKey: string;
  publicIp: string;
  serverId?: string;
  ttl?: number;
  timeoutMs?: number;
  /** Runs a zone's write alone (network/zone-writes.ts); unset, writes go out as they come. */
  zoneWriteGate?: <T>(zone: string, write: () => Promise<T>) => Promise<T>;
}

interface SearchHit {
  object_type: string;
  name: string;
  type: string;
  zone: string;
  content: string;
  /** Records only. */
  ttl?: number;
}

export const ownerMarker = (serviceId: string) => `hostctl-owner service=${serviceId}`;
const fqdn = (name: string) => `${name.toLowerCase().replace(/\.$/, '')}.`;

export function createPowerDnsProvider(options: PowerDnsOptions): DnsProvider {
  const base = `${options.apiUrl.replace(/\/+$/, '')}/api/v1/servers/${options.serverId ?? 'localhost'}`;
  const recordType = options.publicIp.includes(':') ? 'AAAA' : 'A';
  const ttl = options.ttl ?? 60;
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${base}${path}`, {
      method,
      signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
      headers: {
        'X-API-Key': options.apiKey,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    }).catch((error: unknown): never => {
      throw new DomainError('runtime_error', `PowerDNS API unreachable: ${(error as Error).message}`);
    });
    const text = await response.text();
    if (response.status >= 300)
      throw new DomainError(
        'runtime_error',
        `PowerDNS ${method} ${path} failed: ${response.status} ${text.slice(0, 300)}`,
      );
    return text ? (JSON.parse(text) as unknown) : undefined;
  };
  const search = async (q: string, objectType: 'comment' | 'record') =>
    (await call(
      'GET',
      `/search-data?${new URLSearchParams({ q, object_type: objectType, max: '1000' }).toString()}`,
    )) as SearchHit[];
  // The search does not match across spaces: search for the id, then keep exact markers only.
  const owned = async (serviceId: string) =>
    (await search(`*${serviceId}*`, 'comment')).filter((hit) => hit.content === ownerMarker(serviceId));
  const gate = options.zoneWriteGate ?? ((_zone, write) => write());
  const patch = (zone: string, rrsets: unknown[]) =>
    gate(zone, () => call('PATCH', `/zones/${encodeURIComponent(zone)}`, { rrsets }));
  const zoneNames = async () =>
    ((await call('GET', '/zones')) as { name: string }[]).map((zone) => zone.name);
  const readZone = async (zone: string) =>
    ((await call('GET', `/zones/${encodeURIComponent(zone)}`)) as { rrsets: ZoneRrset[] }).rrsets;
  /** The zone a name belongs to: the longest zone of the server it ends in. */
  const zoneOf = (zones: string[], name: string) =>
    zones.filter((z) => name === z || name.endsWith(`.${z}`)).sort((a, b) => b.length - a.length)[0];

  return {
    async upsertRecords(serviceId, names) {
      const report: DnsReport = { published: [], skipped: [] };
      const zones = await zoneNames();
      const mine = await owned(serviceId);
      const wanted = new Set(names.map(fqdn));
      for (const name of wanted) {
        const zone = zoneOf(zones, name);
        if (!zone) {
          report.skipped.push({ name, reason: 'no zone on the DNS server contains it' });
          continue;
        }
        // Someone else's record at this name (theirs, or another service's) is left untouched.
        const existing = (await search(name.slice(0, -1), 'record')).filter(
          (hit) => hit.name === name && ['A', 'AAAA', 'CNAME'].includes(hit.type),
        );
        const foreign = existing.find(
          (hit) => !mine.some((own) => own.name === name && own.type === hit.type),
        );
        if (foreign) {
          report.skipped.push({
            name,
            reason: `it already has a ${foreign.type} record the platform does not own`,
          });
          continue;
        }
        // Already what we would write: no write. Routes are upserted on every upstream move (the
        // Swarm route follower does it each tick) while records depend on the names only, and each
        // write takes the zone's lock (zone-writes.ts), which must never sit on the routing path.
        if (
          existing.length === 1 &&
          existing[0]!.type === recordType &&
          existing[0]!.content === options.publicIp &&
          existing[0]!.ttl === ttl
        ) {
          report.published.push(name);
          continue;
        }
        await patch(zone, [
          {
            name,
            type: recordType,
            ttl,
            changetype: 'REPLACE',
            records: [{ content: options.publicIp, disabled: false }],
            comments: [{ content: ownerMarker(serviceId), account: 'hostctl' }],
          },
        ]);
        report.published.push(name);
      }
      // Names the service no longer has (a removed custom domain) lose the records we made for them.
      for (const stale of mine.filter((hit) => !wanted.has(hit.name)))
        await patch(stale.zone, [{ name: stale.name, type: stale.type, changetype: 'DELETE' }]);
      return report;
    },

    async removeRecords(serviceId) {
      for (const hit of await owned(serviceId))
        await patch(hit.zone, [{ name: hit.name, type: hit.type, changetype: 'DELETE' }]);
    },

    // One read of each zone involved, whatever the number of services (a sweep runs every few s).
    async findMissing(wanted) {
      const zones = await zoneNames();
      const byZone = new Map<string, ZoneRrset[]>();
      const missing = new Set<string>();
      for (const { serviceId, names } of wanted) {
        for (const name of names.map(fqdn)) {
          const zone = zoneOf(zones, name);
          if (!zone) continue;
          let rrsets = byZone.get(zone);
          if (!rrsets) {
            rrsets = await readZone(zone);
            byZone.set(zone, rrsets);
          }
          const hasAddress = rrsets.some(
            (rrset) => rrset.name === name && ['A', 'AAAA', 'CNAME'].includes(rrset.type),
          );
          // A record at the name is ours (nothing to do) or someone else's (upsertRecords would
          // leave it alone too): only a name with none lacks what a deploy publishes.
          if (!hasAddress) missing.add(serviceId);
        }
      }
      return missing;
    },
  };
}

interface ZoneRrset {
  name: string;
  type: string;
}
