// DNS writes of several worker replicas at once, against the real PowerDNS (SQLite backend) and
// real advisory locks: each replica has its own provider and its own lock pool, as in production.
import { randomUUID } from 'node:crypto';
import { createAdvisoryLocks, type AdvisoryLocks } from '@hostctl/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPowerDnsProvider } from '../adapters/powerdns-provider.js';
import { PDNS_API_URL, pdns, pdnsApiKey } from '../testing/network-fixtures.js';
import { TEST_DATABASE_URL } from '../testing/test-env.js';
import { oneWriterPerZone } from './zone-writes.js';

const REPLICAS = 4;
const SERVICES_PER_REPLICA = 4;
const zone = `hostctl-zone-${randomUUID().slice(0, 8)}.test`;
const lockPools: AdvisoryLocks[] = [];

beforeAll(async () => {
  expect(await pdns('POST', '/zones', { name: `${zone}.`, kind: 'Native', nameservers: [] })).toBe(201);
});
afterAll(async () => {
  await pdns('DELETE', `/zones/${zone}.`);
  await Promise.all(lockPools.map((locks) => locks.close()));
});

function replica() {
  const locks = createAdvisoryLocks({ url: TEST_DATABASE_URL, max: 4 });
  lockPools.push(locks);
  return createPowerDnsProvider({
    apiUrl: PDNS_API_URL,
    apiKey: pdnsApiKey(),
    publicIp: '127.0.0.1',
    zoneWriteGate: oneWriterPerZone(locks),
  });
}

async function addressRecords(): Promise<string[]> {
  const response = await fetch(`${PDNS_API_URL}/api/v1/servers/localhost/zones/${zone}.`, {
    headers: { 'X-API-Key': pdnsApiKey() },
  });
  const { rrsets } = (await response.json()) as { rrsets: { name: string; type: string }[] };
  return rrsets.filter((rrset) => rrset.type === 'A').map((rrset) => rrset.name);
}

describe('DNS writes from several worker replicas at once', () => {
  it('publishes and removes every record, none refused as "database is locked"', async () => {
    const replicas = Array.from({ length: REPLICAS }, replica);
    const services = replicas.flatMap((provider, r) =>
      Array.from({ length: SERVICES_PER_REPLICA }, (_, i) => ({
        provider,
        id: randomUUID(),
        name: `svc-${r}-${i}.${zone}`,
      })),
    );

    const published = await Promise.allSettled(
      services.map(({ provider, id, name }) => provider.upsertRecords(id, [name])),
    );
    expect(published.filter((result) => result.status === 'rejected')).toEqual([]);
    expect((await addressRecords()).sort()).toEqual(services.map(({ name }) => `${name}.`).sort());

    const removed = await Promise.allSettled(services.map(({ provider, id }) => provider.removeRecords(id)));
    expect(removed.filter((result) => result.status === 'rejected')).toEqual([]);
    expect(await addressRecords()).toEqual([]);
  });
});

describe('a publish that changes nothing', () => {
  it('writes the zone only when the records change, so route moves never wait for its lock', async () => {
    const writes: string[] = [];
    const provider = createPowerDnsProvider({
      apiUrl: PDNS_API_URL,
      apiKey: pdnsApiKey(),
      publicIp: '127.0.0.1',
      zoneWriteGate: (written, write) => {
        writes.push(written);
        return write();
      },
    });
    const id = randomUUID();
    const name = `svc-same.${zone}`;
    const other = `www-same.${zone}`;

    expect((await provider.upsertRecords(id, [name])).published).toEqual([`${name}.`]);
    expect(writes).toHaveLength(1);
    // The same names again (what a route follower does on every upstream move): published, unwritten.
    expect((await provider.upsertRecords(id, [name])).published).toEqual([`${name}.`]);
    expect(writes).toHaveLength(1);
    // A new name is written; a dropped one is deleted.
    await provider.upsertRecords(id, [name, other]);
    expect(writes).toHaveLength(2);
    await provider.upsertRecords(id, [other]);
    expect(writes).toHaveLength(3);
    expect(await addressRecords()).toEqual([`${other}.`]);
    await provider.removeRecords(id);
    expect(await addressRecords()).toEqual([]);
  });
});
