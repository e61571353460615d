import type pg from 'pg';
import { servicesListStatement, type ServiceListQuery } from '@hostctl/db';

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
 * The exact SQL the API's list issues (one statement: page and total) (the services store's own statement builder, so nothing is
 * reproduced by hand), run under EXPLAIN (ANALYZE, BUFFERS) with the same parameters.
 */
export async function explainList(
  pool: pg.Pool,
  query: Omit<ServiceListQuery, 'page' | 'perPage'>,
): Promise<ExplainedQuery> {
  const statement = servicesListStatement({ kind: 'all' }, { page: 1, perPage: 20, ...query });
  if (statement === null) throw new Error('the admin scope always has a list statement');
  const { rows } = await pool.query<{ 'QUERY PLAN': string }>(
    `EXPLAIN (ANALYZE, BUFFERS) ${statement.text}`,
    statement.values,
  );
  const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
  const executionMs = Number(/Execution Time: ([\d.]+) ms/.exec(plan)?.[1] ?? Number.NaN);
  return {
    sql: statement.text,
    params: statement.values,
    plan,
    executionMs,
    fullScan: /Seq Scan on services/.test(plan),
  };
}
