import { afterAll, describe, expect, it } from 'vitest';
import { createAcmeDnsChallengesStore, createAdvisoryLocks } from '@hostctl/db';
import { createTestDb, silentLogger, testConfig, uniquePrefix } from './testing/fixtures.js';
import { CADDY_ADMIN_URL, PDNS_API_URL, pdnsApiKey } from './testing/network-fixtures.js';
import { createCaddyAdmin } from './adapters/caddy-admin.js';
import { challengeRouteId, createCaddyChallenges } from './tls/caddy-challenges.js';
import { CHALLENGE_ROUTE_MAX_AGE_MS, createChallengeSweep } from './tls/challenge-sweep.js';
import { createPowerDnsChallenges } from './tls/powerdns-challenges.js';
import { recordDnsChallenges } from './tls/recorded-dns-challenges.js';

// The sweep of http-01 routes left in the real Caddy by a worker killed mid-order (docs/tls.md):
// the routes are planted through Caddy's admin API exactly as another process's order leaves
// them (the ACME client's `finally` never ran), and the order "in flight" is its advisory lock
// held on another connection, as certificate-order.ts holds it.
const prefix = uniquePrefix('acmesweep');
const SERVER = 'hostctl';
const routes = `/config/apps/http/servers/${SERVER}/routes`;
// A connection per call: Caddy closes its admin connections after a config change (caddy-admin.ts).
const caddy = createCaddyAdmin(CADDY_ADMIN_URL);
const locks = createAdvisoryLocks({ url: testConfig(prefix).DATABASE_URL, max: 2 });
// The replica whose order is running holds the domain's lock on a connection of its own.
const otherReplica = createAdvisoryLocks({ url: testConfig(prefix).DATABASE_URL, max: 1 });
const planted: string[] = [];

const ago = (ms: number) => new Date(Date.now() - ms);
const STALE_AGE = CHALLENGE_ROUTE_MAX_AGE_MS + 60_000;

/** A challenge route as createCaddyChallenges writes it, added by some other process at `addedAt`. */
async function plant(instance: string, domain: string, token: string, addedAt: Date): Promise<string> {
  const id = challengeRouteId(instance, token, addedAt);
  await caddy.must('PUT', `${routes}/0`, {
    '@id': id,
    match: [{ host: [domain], path: [`/.well-known/acme-challenge/${token}`] }],
    handle: [{ handler: 'static_response', status_code: 200, body: `${token}.thumbprint` }],
    terminal: true,
  });
  planted.push(id);
  return id;
}

const inCaddy = async (id: string) => (await caddy.call('GET', `/id/${id}`)).status === 200;

const db = createTestDb();
const powerDns = createPowerDnsChallenges({
  apiUrl: PDNS_API_URL,
  apiKey: pdnsApiKey(),
  zone: 'apps.localhost',
});
const plantedTxt: [string, string][] = [];

afterAll(async () => {
  for (const id of planted) await caddy.removeId(id);
  for (const [name, value] of plantedTxt) await powerDns.remove(name, value).catch(() => undefined);
  await db.acmeDnsChallenge.deleteMany({ where: { name: { in: plantedTxt.map(([name]) => name) } } });
  await locks.close();
  await otherReplica.close();
  await db.$disconnect();
});

/** The TXT values PowerDNS serves at `name` (what a CA validating dns-01 reads). */
async function txtValues(name: string): Promise<string[]> {
  const response = await fetch(
    `${PDNS_API_URL}/api/v1/servers/localhost/zones/apps.localhost.?rrset_name=${encodeURIComponent(`${name}.`)}&rrset_type=TXT`,
    { headers: { 'X-API-Key': pdnsApiKey() } },
  );
  const zone = (await response.json()) as { rrsets?: { records: { content: string }[] }[] };
  return (zone.rrsets ?? []).flatMap((rrset) =>
    rrset.records.map((record) => record.content.replaceAll('"', '')),
  );
}

describe('the challenge route sweep', () => {
  it('removes a route left by an interrupted order and keeps fresh, running and foreign ones', async () => {
    const challenges = createCaddyChallenges({
      adminUrl: CADDY_ADMIN_URL,
      serverName: SERVER,
      instance: prefix,
    });
    const sweep = createChallengeSweep({ leftovers: [challenges], locks, logger: silentLogger });
    // A token with '-' (base64url), left by a worker killed mid-order long ago.
    const stale = await plant(prefix, 'stale.sweep.test', 'stale-tok_en', ago(STALE_AGE));
    // Another replica's order that began a moment ago.
    const fresh = await plant(prefix, 'fresh.sweep.test', 'fresh-token', new Date());
    // An old route whose domain is being ordered right now (a slow CA): its lock is held.
    const busy = await plant(prefix, 'busy.sweep.test', 'busy-token', ago(STALE_AGE));
    // Another installation sharing this Caddy, whose QUEUE_PREFIX starts with ours: never ours to remove.
    const foreign = await plant(`${prefix}-b`, 'other.sweep.test', 'other-token', ago(STALE_AGE));
    // This process's own order, in flight.
    await challenges.add('own.sweep.test', 'own-token', 'own-token.thumbprint');
    const own = (await caddy.json<{ '@id'?: string }[]>(routes)) ?? [];
    const ownId = own
      .map((route) => route['@id'])
      .find((id) => id?.startsWith(`hostctl-acme-${prefix}-`) && id.endsWith('-own-token'));
    expect(ownId).toBeDefined();

    const lease = await otherReplica.tryAcquire('hostctl:tls:busy.sweep.test');
    expect(lease).not.toBeNull();
    try {
      expect(await sweep.runOnce()).toEqual([stale]);
      expect(await inCaddy(stale)).toBe(false);
      for (const id of [fresh, busy, foreign, ownId ?? '']) expect(await inCaddy(id)).toBe(true);
    } finally {
      await lease?.release();
    }

    // The slow order ended without its `finally` (killed): the next round removes its route.
    expect(await sweep.runOnce()).toEqual([busy]);
    expect(await inCaddy(busy)).toBe(false);
    // The own order finishes the usual way, and nothing else of this installation is left but the fresh one.
    await challenges.remove('own.sweep.test', 'own-token');
    expect(await inCaddy(ownId ?? '')).toBe(false);
    expect(await inCaddy(fresh)).toBe(true);
    expect(await sweep.runOnce()).toEqual([]);
  });
});

describe('the dns-01 value sweep', () => {
  it('withdraws a value a killed order left in PowerDNS, and keeps fresh, running and foreign ones', async () => {
    const ledger = createAcmeDnsChallengesStore(db);
    const dns = recordDnsChallenges(powerDns, ledger);
    const sweep = createChallengeSweep({ leftovers: [dns], locks, logger: silentLogger });
    const name = (label: string) => `_acme-challenge.${label}-${prefix}.apps.localhost`;
    const stale = name('stale');
    const fresh = name('fresh');
    const busy = name('busy');
    // Published the way an order publishes (ledger row, then the TXT value), never withdrawn:
    // the worker was killed before its `finally`. Then aged past any order's length.
    for (const [record, value] of [
      [stale, 'stale-value'],
      [fresh, 'fresh-value'],
      [busy, 'busy-value'],
    ] as const) {
      plantedTxt.push([record, value]);
      await dns.add(record, value);
    }
    await db.acmeDnsChallenge.updateMany({
      where: { name: { in: [stale, busy] } },
      data: { addedAt: ago(STALE_AGE) },
    });
    // Another installation's value at the stale name: not in this ledger, never ours to withdraw.
    plantedTxt.push([stale, 'foreign-value']);
    await powerDns.add(stale, 'foreign-value');

    // The wildcard order for busy's domain is running on another replica (its lock is held).
    const lease = await otherReplica.tryAcquire(`hostctl:tls:*.busy-${prefix}.apps.localhost`);
    expect(lease).not.toBeNull();
    try {
      expect(await sweep.runOnce()).toEqual([stale]);
      expect(await txtValues(stale)).toEqual(['foreign-value']);
      expect(await txtValues(fresh)).toEqual(['fresh-value']);
      expect(await txtValues(busy)).toEqual(['busy-value']);
    } finally {
      await lease?.release();
    }
    // That order was killed too: the next round withdraws its value; the ledger keeps only the fresh one.
    expect(await sweep.runOnce()).toEqual([busy]);
    expect(await txtValues(busy)).toEqual([]);
    const left = await db.acmeDnsChallenge.findMany({ where: { name: { in: [stale, fresh, busy] } } });
    expect(left.map((row) => [row.name, row.value])).toEqual([[fresh, 'fresh-value']]);
  });
});
