import { cp, mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../client.js';
import { keyringFromEnvironment } from '../vault/keyring-settings.js';
import { migrate } from '../migrator.js';
import {
  createFreshDatabase,
  MIGRATIONS_DIR,
  withClient,
  type FreshDatabase,
} from '../testing/fresh-database.js';
import { createServicesStore } from './services.store.js';

// The hot reads written as SQL (services.sql.ts). The list's `total` comes from service_counts,
// kept by a trigger on services: these tests hold it to its definition — a count of live services
// per customer and status — under every kind of write, concurrently, then check the list and
// by-id statements against what they replace.

const STATUSES = ['running', 'stopped', 'deploying', 'failed'] as const;
const COUNTS_MIGRATION = '20261122200000_service_counts';

let fresh: FreshDatabase;
let database: Database;
let customers: string[];

const counted = (client: pg.Client | pg.Pool) =>
  client
    .query<{ key: string; live: number }>(
      `SELECT customer_id || '/' || status AS key, live FROM service_counts WHERE live <> 0 ORDER BY 1`,
    )
    .then((r) => r.rows);
const actual = (client: pg.Client | pg.Pool) =>
  client
    .query<{ key: string; live: number }>(
      `SELECT customer_id || '/' || status AS key, count(*)::int AS live FROM services
       WHERE deleted_at IS NULL GROUP BY 1 ORDER BY 1`,
    )
    .then((r) => r.rows);

let serial = 0;
async function insertService(
  client: pg.Client | pg.Pool,
  customerId: string,
  status: string,
  options: { name?: string; deleted?: boolean } = {},
): Promise<string> {
  const { rows } = await client.query<{ id: string }>(
    `INSERT INTO services (id, name, customer_id, status, deploy_method, url, updated_at, deleted_at)
     VALUES (gen_random_uuid()::text, $1, $2, $3::"ServiceStatus", 'compose', 'http://x', now(), $4)
     RETURNING id`,
    [
      options.name ?? `svc-${++serial}-${Math.random().toString(36).slice(2, 8)}`,
      customerId,
      status,
      options.deleted ? new Date() : null,
    ],
  );
  return rows[0]!.id;
}

beforeAll(async () => {
  fresh = await createFreshDatabase('hostctl_counts');
  // Migrate up to the migration before the counts, add services, then apply it: the backfill.
  const before = await mkdtemp(path.join(os.tmpdir(), 'hostctl-migrations-'));
  for (const entry of await readdir(MIGRATIONS_DIR)) {
    if (entry < COUNTS_MIGRATION)
      await cp(path.join(MIGRATIONS_DIR, entry), path.join(before, entry), { recursive: true });
  }
  await migrate(fresh.url, before);
  await rm(before, { recursive: true });
  database = createDatabase({ url: fresh.url, max: 8, keys: keyringFromEnvironment(process.env) });
  customers = [];
  // SQL, not the Prisma client: the schema is the one before the counts migration, and the client
  // reads back columns later migrations added to customers.
  for (const name of ['acme', 'globex', 'initech']) {
    const { rows } = await database.sql.query<{ id: string }>(
      `INSERT INTO customers (id, name, updated_at) VALUES (gen_random_uuid()::text, $1, now()) RETURNING id`,
      [name],
    );
    customers.push(rows[0]!.id);
  }
});
afterAll(async () => {
  await database.db.$disconnect();
  await fresh.drop();
});

describe('service_counts', () => {
  it('is filled in from the services that exist when the migration runs', async () => {
    for (const [i, status] of STATUSES.entries()) {
      for (let n = 0; n <= i; n++) await insertService(database.sql, customers[n % 2]!, status);
    }
    await insertService(database.sql, customers[0]!, 'running', { deleted: true });
    await migrate(fresh.url, MIGRATIONS_DIR);
    expect(await counted(database.sql)).toEqual(await actual(database.sql));
    expect((await counted(database.sql)).reduce((sum, row) => sum + row.live, 0)).toBe(10);
  });

  it('stays equal to a count of live services through concurrent writes of every kind', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) {
      ids.push(await insertService(database.sql, customers[i % 3]!, STATUSES[i % 4]!));
    }
    const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)]!;
    // Six connections, each a stream of single-service transactions (some rolled back). Services
    // of one customer move between statuses in opposite directions at once: a lock-order bug in
    // the trigger shows up here as a deadlock error.
    const actor = async () =>
      withClient(fresh.url, async (client) => {
        for (let step = 0; step < 80; step++) {
          const id = pick(ids);
          const rollback = Math.random() < 0.15;
          await client.query('BEGIN');
          switch (step % 7) {
            case 0:
              ids.push(await insertService(client, pick(customers), pick(STATUSES)));
              break;
            case 1:
              await client.query(
                `UPDATE services SET deleted_at = now() WHERE id = $1 AND deleted_at IS NULL`,
                [id],
              );
              break;
            case 2:
              await client
                .query(`UPDATE services SET deleted_at = NULL WHERE id = $1`, [id])
                .catch(() => undefined);
              break;
            case 3:
              await client.query(`UPDATE services SET customer_id = $2 WHERE id = $1`, [id, pick(customers)]);
              break;
            case 4:
              await client.query(`DELETE FROM services WHERE id = $1`, [id]);
              break;
            case 5:
              // Not a counted column: the trigger must not fire at all.
              await client.query(`UPDATE services SET cpu_usage = random() WHERE id = $1`, [id]);
              break;
            default:
              await client.query(`UPDATE services SET status = $2::"ServiceStatus" WHERE id = $1`, [
                id,
                pick(STATUSES),
              ]);
          }
          await client.query(rollback ? 'ROLLBACK' : 'COMMIT');
        }
      });
    await Promise.all(Array.from({ length: 6 }, actor));
    const after = await actual(database.sql);
    expect(after.length).toBeGreaterThan(3);
    expect(await counted(database.sql)).toEqual(after);
  });

  it('is emptied when services is truncated', async () => {
    await insertService(database.sql, customers[0]!, 'running');
    await database.sql.query('TRUNCATE services CASCADE');
    expect(await counted(database.sql)).toEqual([]);
  });
});

describe('services list statement', () => {
  let store: ReturnType<typeof createServicesStore>;
  beforeAll(async () => {
    store = createServicesStore(database.db, database.sql, database.vault);
    await database.sql.query('TRUNCATE services CASCADE');
    const [acme, globex] = customers as [string, string];
    for (let i = 0; i < 7; i++)
      await insertService(database.sql, acme, i < 4 ? 'running' : 'failed', { name: `web-${i}` });
    for (let i = 0; i < 3; i++) await insertService(database.sql, globex, 'running', { name: `api-${i}` });
    await insertService(database.sql, globex, 'stopped', { name: 'gone', deleted: true });
    await insertService(database.sql, acme, 'stopped', { name: '100%_sure' });
    await insertService(database.sql, acme, 'stopped', { name: '100x-sure' });
  });
  const list = (
    query: Partial<Parameters<typeof store.list>[1]>,
    scope: Parameters<typeof store.list>[0] = { kind: 'all' },
  ) => store.list(scope, { page: 1, perPage: 20, sort: 'created_at', order: 'desc', ...query });

  it('totals every filter over live services only', async () => {
    const [acme, globex] = customers as [string, string];
    expect((await list({})).total).toBe(12);
    expect((await list({ status: 'running' })).total).toBe(7);
    expect((await list({ customerId: acme })).total).toBe(9);
    expect((await list({ customerId: globex, status: 'running' })).total).toBe(3);
    expect((await list({ status: 'stopped', customerId: globex })).total).toBe(0);
    expect((await list({ search: 'WEB' })).total).toBe(7);
  });

  it('keeps the total on a page past the end, and pages without gaps or repeats', async () => {
    const beyond = await list({ page: 5, perPage: 5 });
    expect(beyond).toEqual({ rows: [], total: 12 });
    const pages = await Promise.all(
      [1, 2, 3].map((page) => list({ page, perPage: 5, sort: 'status', order: 'asc' })),
    );
    const ids = pages.flatMap((p) => p.rows.map((row) => row.id));
    expect(ids).toHaveLength(12);
    expect(new Set(ids).size).toBe(12);
    const statuses = pages.flatMap((p) => p.rows.map((row) => row.status));
    expect(statuses).toEqual([...statuses].sort((a, b) => STATUSES.indexOf(a) - STATUSES.indexOf(b)));
  });

  it('limits a customer scope to its own services, whatever customer_id asks for', async () => {
    const [acme, globex] = customers as [string, string];
    const own = await list({}, { kind: 'customer', customerId: globex });
    expect(own.total).toBe(3);
    expect(own.rows.every((row) => row.customerId === globex)).toBe(true);
    expect(await list({ customerId: acme }, { kind: 'customer', customerId: globex })).toEqual({
      rows: [],
      total: 0,
    });
    expect(await list({}, { kind: 'none' })).toEqual({ rows: [], total: 0 });
  });

  it('searches for the text itself: % and _ are not wildcards', async () => {
    expect((await list({ search: '%_' })).rows.map((row) => row.name)).toEqual(['100%_sure']);
    expect((await list({ search: '0_s' })).total).toBe(0);
    expect((await list({ search: '0x' })).rows.map((row) => row.name)).toEqual(['100x-sure']);
  });

  it('returns list rows with the types the API maps', async () => {
    const { rows } = await list({ sort: 'name', order: 'asc', perPage: 1 });
    expect(rows).toEqual([
      expect.objectContaining({
        name: '100%_sure',
        status: 'stopped',
        createdAt: expect.any(Date),
        updatedAt: expect.any(Date),
        cpuUsage: 0,
        templateId: null,
        deployMethod: 'compose',
      }),
    ]);
  });
});

describe('service by id statement', () => {
  it('returns exactly what Prisma returns for the service and its customer name (no column missed)', async () => {
    const [acme, globex] = customers as [string, string];
    const created = await database.db.service.create({
      data: {
        name: 'full-row',
        customerId: acme,
        status: 'running',
        deployMethod: 'git',
        gitUrl: 'https://git.example.test/a.git',
        gitBranch: 'main',
        variables: { A: '1' },
        customDomains: ['a.example.test'],
        url: 'http://full-row',
        healthLastCheck: new Date(),
        cpuUsage: 1.5,
        deployedAt: new Date(),
      },
    });
    const store = createServicesStore(database.db, database.sql, database.vault);
    const viaPrisma = await database.db.service.findUnique({
      where: { id: created.id },
      include: { customer: { select: { name: true } } },
    });
    expect(await store.findById({ kind: 'all' }, created.id)).toEqual(viaPrisma);
    expect(await store.findById({ kind: 'customer', customerId: acme }, created.id)).toEqual(viaPrisma);
    expect(await store.findById({ kind: 'customer', customerId: globex }, created.id)).toBeNull();
    expect(await store.findById({ kind: 'none' }, created.id)).toBeNull();
    await database.db.service.update({ where: { id: created.id }, data: { deletedAt: new Date() } });
    expect(await store.findById({ kind: 'all' }, created.id)).toBeNull();
  });
});
