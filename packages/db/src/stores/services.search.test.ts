import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../client.js';
import { keyringFromEnvironment } from '../vault/keyring-settings.js';
import { migrate } from '../migrator.js';
import {
  connectClient,
  createFreshDatabase,
  MIGRATIONS_DIR,
  withClient,
  type FreshDatabase,
} from '../testing/fresh-database.js';
import { createServicesStore } from './services.store.js';

// The list's search as a user relies on it: a case-insensitive substring of the name in which %, _
// and \ are plain characters, read through the trigram index, and a `total` that stays exact while
// services come, go, move and are renamed, however many times the same search is repeated (the
// store keeps a search's total with the version of service_counts it was counted at).

type Status = 'running' | 'stopped' | 'deploying' | 'failed';
let fresh: FreshDatabase;
let database: Database;
/** A connection that reads without the index settings below: the reference answers. */
let reference: pg.Client;
let store: ReturnType<typeof createServicesStore>;
let acme: string;
let globex: string;

beforeAll(async () => {
  fresh = await createFreshDatabase('hostctl_search');
  await migrate(fresh.url, MIGRATIONS_DIR);
  // Every connection opened from here on may only read services through an index (bitmap scans):
  // the name filter then has to go through the trigram index, whatever the table's size.
  const name = new URL(fresh.url).pathname.slice(1);
  await withClient(fresh.url, (client) =>
    client.query(
      `ALTER DATABASE ${name} SET enable_seqscan = off;
       ALTER DATABASE ${name} SET enable_indexscan = off;
       ALTER DATABASE ${name} SET enable_indexonlyscan = off`,
    ),
  );
  reference = await connectClient(fresh.url);
  await reference.query('SET enable_seqscan = on');
  database = createDatabase({ url: fresh.url, max: 4, keys: keyringFromEnvironment(process.env) });
  store = createServicesStore(database.db, database.sql, database.vault);
  const ids: string[] = [];
  for (const customer of ['acme', 'globex']) {
    const { rows } = await database.sql.query<{ id: string }>(
      `INSERT INTO customers (id, name, updated_at) VALUES (gen_random_uuid()::text, $1, now()) RETURNING id`,
      [customer],
    );
    ids.push(rows[0]!.id);
  }
  [acme, globex] = ids as [string, string];
});
afterAll(async () => {
  await reference.end();
  await database.db.$disconnect();
  await fresh.drop();
});

let serial = 0;
async function insert(name: string, customerId: string, status = 'running'): Promise<string> {
  const { rows } = await database.sql.query<{ id: string }>(
    `INSERT INTO services (id, name, customer_id, status, deploy_method, url, created_at, updated_at)
     VALUES (gen_random_uuid()::text, $1, $2, $3::"ServiceStatus", 'compose', 'http://x',
             now() + $4 * interval '1 ms', now())
     RETURNING id`,
    [name, customerId, status, ++serial],
  );
  return rows[0]!.id;
}
const update = (sql: string, values: unknown[]) => database.sql.query(sql, values);

/** What the list must answer, computed from every live row without the index or the store. */
async function expected(search: string, filters: { customerId?: string; status?: string } = {}) {
  const { rows } = await reference.query<{ name: string; customer_id: string; status: string }>(
    `SELECT name, customer_id, status FROM services WHERE deleted_at IS NULL ORDER BY created_at DESC, id DESC`,
  );
  return rows
    .filter((row) => row.name.toLowerCase().includes(search.toLowerCase()))
    .filter((row) => filters.customerId === undefined || row.customer_id === filters.customerId)
    .filter((row) => filters.status === undefined || row.status === filters.status)
    .map((row) => row.name);
}

async function search(term: string, filters: { customerId?: string; status?: Status } = {}) {
  const { rows, total } = await store.list(
    { kind: 'all' },
    { page: 1, perPage: 100, sort: 'created_at', order: 'desc', search: term, ...filters },
  );
  return { names: rows.map((row) => row.name), total };
}

describe('search through the trigram index', () => {
  const names = [
    'shop-prod-eu-000001',
    'Shop-Staging-US-000002',
    'blog-shop-000003',
    'workshop',
    'sho-p',
    '100%_sure',
    '100x-sure',
    '10%-off',
    'a_b',
    'axb',
    'back\\slash',
    'backslash',
    'x',
  ];
  beforeAll(async () => {
    for (const [i, name] of names.entries()) await insert(name, i % 2 === 0 ? acme : globex);
    await update(`UPDATE services SET deleted_at = now() WHERE name = 'workshop'`, []);
    await insert('workshop', globex, 'failed');
  });

  it.each([
    ['shop'],
    ['SHOP'],
    ['sHoP-sTaGiNg'],
    ['op-pr'],
    ['000002'],
    ['%'],
    ['_'],
    ['%_'],
    ['0_s'],
    ['0x'],
    ['\\'],
    ['k\\s'],
    ['x'],
    ['nothing-matches-this'],
  ])('finds exactly the names containing %j, in any case', async (term) => {
    const want = await expected(term);
    expect(await search(term)).toEqual({ names: want, total: want.length });
  });

  it('takes %, _ and \\ literally, and a deleted service never matches', async () => {
    expect((await search('%_')).names).toEqual(['100%_sure']);
    expect((await search('0_s')).total).toBe(0);
    expect((await search('a_b')).names).toEqual(['a_b']);
    expect((await search('k\\s')).names).toEqual(['back\\slash']);
    expect(await search('workshop')).toEqual({ names: ['workshop'], total: 1 });
  });

  it('combines the search with the customer and status filters', async () => {
    for (const filters of [{ customerId: acme }, { customerId: globex, status: 'failed' as const }]) {
      const want = await expected('shop', filters);
      expect(await search('shop', filters)).toEqual({ names: want, total: want.length });
    }
  });
});

describe('a repeated search keeps an exact total', () => {
  it('follows every change to the services it counts', async () => {
    await database.sql.query('TRUNCATE services CASCADE');
    const first = await insert('cart-1', acme);
    const second = await insert('cart-2', globex, 'stopped');
    await insert('other', acme);
    const cases: { term: string; filters: { customerId?: string; status?: Status } }[] = [
      { term: 'CART', filters: {} },
      { term: 'cart', filters: { customerId: acme } },
      { term: 'cart', filters: { status: 'running' } },
    ];
    const check = async (step: string) => {
      // Each search twice: the second is answered with the total the first counted, when it may be.
      for (const { term, filters } of cases) {
        const want = await expected(term, filters);
        for (let i = 0; i < 2; i++) {
          expect(await search(term, filters), `${step}: ${term} ${JSON.stringify(filters)}`).toEqual({
            names: want,
            total: want.length,
          });
        }
      }
    };
    await check('start');
    await insert('cart-3', acme);
    await check('a matching service created');
    await insert('unrelated', globex);
    await check('another service created');
    await update(`UPDATE services SET deleted_at = now() WHERE id = $1`, [first]);
    await check('soft-deleted');
    await update(`UPDATE services SET deleted_at = NULL WHERE id = $1`, [first]);
    await check('restored');
    await update(`UPDATE services SET status = 'running' WHERE id = $1`, [second]);
    await check('status changed');
    await update(`UPDATE services SET customer_id = $2 WHERE id = $1`, [second, acme]);
    await check('moved to another customer');
    await update(`UPDATE services SET name = 'renamed' WHERE id = $1`, [first]);
    await check('renamed out of the search');
    await update(`UPDATE services SET name = 'Cart-again' WHERE name = 'other'`, []);
    await check('renamed into the search');
    await update(`UPDATE services SET cpu_usage = 1.5, updated_at = now() WHERE id = $1`, [second]);
    await check('telemetry written');
    await update(`DELETE FROM services WHERE id = $1`, [second]);
    await check('deleted for good');
    await database.sql.query('TRUNCATE services CASCADE');
    await check('truncated');
    await insert('cart-1', acme);
    await check('created again after truncation');
  });
});
