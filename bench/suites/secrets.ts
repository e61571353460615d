import { randomBytes, randomUUID } from 'node:crypto';
import { createDb, keyringFromEnvironment, type Db } from '@hostctl/db';
import type pg from 'pg';
import { assertBenchDatabase, BENCH } from '../lib/config.js';
import { benchPool, migrateBenchDatabase } from '../lib/data.js';
import { compare } from '../lib/compare.js';
import { row, type Row } from '../lib/report.js';
import { log } from './context.js';

/**
 * What opening sealed variables costs (docs/secrets.md): the same read through the same client of
 * 100 services with 20 secret variables each, sealed (one AES-256-GCM envelope per service, the
 * customer's data key cached) against the same rows holding the same values as plain JSON (written
 * with `pg`, as rows from before encryption were; the client passes plaintext through). The only
 * difference between figure and baseline is opening the envelopes. Then one service at a time,
 * which is what a deploy reads. The service list of the API never reads variables: this is the
 * cost a reader of variables pays (the detail, the worker), not the list's.
 *
 * Needs only the bench database (migrated here), not the API, Redis or Docker.
 */
const SERVICES = 100;
const VARIABLES = 20;

function variablesOf(i: number): { variables: Record<string, string>; secretNames: Record<string, string> } {
  const variables = Object.fromEntries(
    Array.from({ length: VARIABLES }, (_, v) => [
      `SECRET_${v}`,
      `${i}-${randomBytes(24).toString('base64url')}`,
    ]),
  );
  const at = new Date().toISOString();
  return { variables, secretNames: Object.fromEntries(Object.keys(variables).map((name) => [name, at])) };
}

async function insertCustomer(pool: pg.Pool, label: string): Promise<string> {
  const { rows } = await pool.query<{ id: string }>(
    `INSERT INTO customers (id, name, updated_at) VALUES (gen_random_uuid()::text, $1, now()) RETURNING id`,
    [`bench-secrets-${label}-${randomUUID().slice(0, 8)}`],
  );
  return rows[0]!.id;
}

export async function secretsSuite(ctx: { rows: Row[]; notes: string[] }): Promise<void> {
  assertBenchDatabase(BENCH.databaseUrl);
  await migrateBenchDatabase();
  const pool = benchPool(2);
  const db: Db = createDb({ url: BENCH.databaseUrl, max: 2, keys: keyringFromEnvironment(process.env) });
  const customers: string[] = [];
  try {
    const sealedCustomer = await insertCustomer(pool, 'sealed');
    const plainCustomer = await insertCustomer(pool, 'plain');
    customers.push(sealedCustomer, plainCustomer);
    log(`secrets: ${SERVICES} services × ${VARIABLES} secret variables, sealed and plain`);
    const sealedIds: string[] = [];
    const plainIds: string[] = [];
    for (let i = 0; i < SERVICES; i += 1) {
      const { variables, secretNames } = variablesOf(i);
      const common = { status: 'running' as const, deployMethod: 'compose' as const, compose: '' };
      // Through the client: sealed on write, as every write of variables is.
      const sealed = await db.service.create({
        data: {
          ...common,
          name: `bench-sealed-${i}-${randomUUID().slice(0, 6)}`,
          customerId: sealedCustomer,
          variables,
          secretNames,
          url: 'http://bench.test',
        },
        select: { id: true },
      });
      sealedIds.push(sealed.id);
      // Through pg: the same values stored as plain JSON.
      const { rows } = await pool.query<{ id: string }>(
        `INSERT INTO services (id, name, customer_id, status, deploy_method, variables, secret_names, url, updated_at)
         VALUES (gen_random_uuid()::text, $1, $2, 'running', 'compose', $3, $4, 'http://bench.test', now()) RETURNING id`,
        [`bench-plain-${i}-${randomUUID().slice(0, 6)}`, plainCustomer, variables, secretNames],
      );
      plainIds.push(rows[0]!.id);
    }
    const sealedCount = async (ids: string[]) =>
      (
        await pool.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM services WHERE id = ANY($1) AND variables ? '$enc'`,
          [ids],
        )
      ).rows[0]!.n;
    if ((await sealedCount(sealedIds)) !== SERVICES || (await sealedCount(plainIds)) !== 0)
      throw new Error('secrets bench: the sealed rows are not all sealed, or the plain ones are not plain');

    const readAll = (customerId: string) => () =>
      db.service.findMany({ where: { customerId }, select: { id: true, variables: true } });
    const list = await compare(readAll(sealedCustomer), readAll(plainCustomer));
    let next = 0;
    const readOne = (ids: string[]) => () =>
      db.service.findUniqueOrThrow({
        where: { id: ids[(next = (next + 1) % ids.length)]! },
        select: { id: true, variables: true },
      });
    const one = await compare(readOne(sealedIds), readOne(plainIds));

    const perService = ((list.figure - list.baseline) * 1000) / SERVICES;
    log(
      `secrets: ${SERVICES} services ${list.figure.toFixed(2)} ms sealed, ${list.baseline.toFixed(2)} ms plain; one service ${(one.figure * 1000).toFixed(0)} µs sealed, ${(one.baseline * 1000).toFixed(0)} µs plain`,
    );
    ctx.rows.push(
      row({
        section: 'secrets',
        name: `read ${SERVICES} services' variables (${VARIABLES} secrets each)`,
        baseline: { label: 'same rows plain', value: list.baseline, unit: 'ms' },
        figure: { value: list.figure, unit: 'ms' },
        note: `opening one service's envelope: ${perService.toFixed(1)} µs`,
      }),
      row({
        section: 'secrets',
        name: `read one service's variables (a deploy's read)`,
        baseline: { label: 'same row plain', value: one.baseline * 1000, unit: 'µs' },
        figure: { value: one.figure * 1000, unit: 'µs' },
      }),
    );
    ctx.notes.push(
      'secrets: the same Prisma read of sealed rows against the same values stored plain (the client passes plaintext through); data keys cached, as in a running process. The service list never reads variables.',
    );
  } finally {
    if (customers.length > 0) {
      await pool.query('DELETE FROM services WHERE customer_id = ANY($1)', [customers]);
      await pool.query('DELETE FROM data_keys WHERE customer_id = ANY($1)', [customers]);
      await pool.query('DELETE FROM customers WHERE id = ANY($1)', [customers]);
    }
    await db.$disconnect();
    await pool.end();
  }
}
