import type { ChallengeDns } from './acme-client.js';

export interface PowerDnsChallengeOptions {
  apiUrl: string;
  apiKey: string;
  /** The zone that holds the names being validated (PDNS_ZONE, else APPS_DOMAIN). */
  zone: string;
}

/**
 * dns-01 TXT records in the platform's PowerDNS. A value is added to the rrset and removed from
 * it, never the rrset replaced wholesale: another order (a second installation on the same zone,
 * or the wildcard and its base name) may have its own value there at the same time.
 */
export function createPowerDnsChallenges(options: PowerDnsChallengeOptions): ChallengeDns {
  const zone = `${options.zone.replace(/\.$/, '')}.`;
  const base = `${options.apiUrl.replace(/\/$/, '')}/api/v1/servers/localhost/zones/${encodeURIComponent(zone)}`;
  const headers = { 'X-API-Key': options.apiKey, 'content-type': 'application/json' };

  async function current(fqdn: string): Promise<string[]> {
    const response = await fetch(`${base}?rrset_name=${encodeURIComponent(fqdn)}&rrset_type=TXT`, {
      headers,
    });
    if (!response.ok) throw new Error(`PowerDNS answered ${response.status} reading ${fqdn} TXT`);
    const body = (await response.json()) as {
      rrsets?: { name: string; type: string; records: { content: string }[] }[];
    };
    const rrset = body.rrsets?.find((r) => r.name === fqdn && r.type === 'TXT');
    return rrset?.records.map((record) => record.content) ?? [];
  }

  async function write(fqdn: string, contents: string[]): Promise<void> {
    const rrset =
      contents.length === 0
        ? { name: fqdn, type: 'TXT', changetype: 'DELETE' }
        : {
            name: fqdn,
            type: 'TXT',
            ttl: 60,
            changetype: 'REPLACE',
            records: contents.map((content) => ({ content, disabled: false })),
          };
    const response = await fetch(base, {
      method: 'PATCH',
      headers,
      body: JSON.stringify({ rrsets: [rrset] }),
    });
    await response.text();
    if (response.status !== 204) throw new Error(`PowerDNS answered ${response.status} writing ${fqdn} TXT`);
  }

  return {
    async add(name, value) {
      const fqdn = `${name}.`;
      const quoted = `"${value}"`;
      const contents = await current(fqdn);
      if (!contents.includes(quoted)) await write(fqdn, [...contents, quoted]);
    },
    async remove(name, value) {
      const fqdn = `${name}.`;
      const quoted = `"${value}"`;
      const contents = await current(fqdn);
      if (contents.includes(quoted))
        await write(
          fqdn,
          contents.filter((content) => content !== quoted),
        );
    },
  };
}
