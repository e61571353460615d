import { PrismaPg } from '@prisma/adapter-pg';
import type pg from 'pg';
import { createServicesStore, type ServiceListQuery } from '@hostctl/db';
import { PrismaClient } from '../../packages/db/src/generated/client.ts';
import { BENCH } from './config.js';

export interface CapturedQuery {
  sql: string;
  params: unknown[];
}

export interface ExplainedQuery extends CapturedQuery {
  plan: string;
  executionMs: number;
  /** The plan reads the whole table (a Seq Scan on services) */
  fullScan: boolean;
}

/**
 * The exact SQL the API's list issues: the real services store (packages/db) on a Prisma client
 * with query events on, so nothing is reproduced by hand. Each statement is then run under
 * EXPLAIN (ANALYZE, BUFFERS) with the same parameters.
 */
export async function explainList(
  pool: pg.Pool,
  query: Omit<ServiceListQuery, 'page' | 'perPage'>,
): Promise<ExplainedQuery[]> {
  const adapter = new PrismaPg({ connectionString: BENCH.databaseUrl, max: 2 });
  const client = new PrismaClient({ adapter, log: [{ emit: 'event', level: 'query' }] });
  const captured: CapturedQuery[] = [];
  client.$on('query', (event) => {
    captured.push({ sql: event.query, params: JSON.parse(event.params) as unknown[] });
  });
  try {
    await createServicesStore(client).list({ kind: 'all' }, { page: 1, perPage: 20, ...query });
  } finally {
    await client.$disconnect();
  }
  const explained: ExplainedQuery[] = [];
  for (const statement of captured) {
    const { rows } = await pool.query<{ 'QUERY PLAN': string }>(
      `EXPLAIN (ANALYZE, BUFFERS) ${statement.sql}`,
      statement.params,
    );
    const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
    const executionMs = Number(/Execution Time: ([\d.]+) ms/.exec(plan)?.[1] ?? Number.NaN);
    explained.push({ ...statement, plan, executionMs, fullScan: /Seq Scan on services/.test(plan) });
  }
  return explained;
}
