/** The dev stack's PowerDNS (scripts/setup-services.sh) on loopback; the key comes from .data/env.test. */
const PDNS_API_URL = process.env.PDNS_API_URL ?? 'http://127.0.0.1:8081';

export async function pdns(method: string, apiPath: string, body?: unknown): Promise<number> {
  const key = process.env.PDNS_API_KEY;
  if (!key)
    throw new Error('PDNS_API_KEY is unset: source .data/env.test (scripts/setup-services.sh writes it)');
  const response = await fetch(`${PDNS_API_URL}/api/v1/servers/localhost${apiPath}`, {
    method,
    headers: { 'X-API-Key': key, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  await response.text();
  return response.status;
}

/** Replaces one rrset (name with a trailing dot) in a zone the test made. */
export async function publish(zone: string, name: string, type: string, contents: string[]): Promise<void> {
  const status = await pdns('PATCH', `/zones/${zone}.`, {
    rrsets: [
      {
        name,
        type,
        ttl: 60,
        changetype: 'REPLACE',
        records: contents.map((content) => ({ content, disabled: false })),
      },
    ],
  });
  if (status !== 204) throw new Error(`PowerDNS refused ${type} ${name}: ${status}`);
}
