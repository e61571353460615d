import type { CustomerScope } from '@hostctl/auth-policy';
import type { SqlPool } from '../client.js';
import type { Service } from '../generated/client.ts';
import { servicesListStatement, type ServiceListQuery } from './services.sql.js';

/** A list item's columns (selected by servicesListStatement). */
export type ServiceListRow = Pick<
  Service,
  | 'id'
  | 'name'
  | 'status'
  | 'url'
  | 'customerId'
  | 'templateId'
  | 'deployMethod'
  | 'createdAt'
  | 'updatedAt'
  | 'cpuUsage'
  | 'memoryUsageMb'
  | 'memoryLimitMb'
>;

type ListResultRow = { total: number | null; version?: string } & (
  ServiceListRow | { [K in keyof ServiceListRow]: null }
);

/** Search totals kept per process: enough for every search a team has open, bounded. */
const SEARCH_TOTALS_KEPT = 1_000;

/**
 * The list read: one statement per request. A search's `total` is the number of live services
 * whose name contains the term, which PostgreSQL can only count by visiting every match (8,000 of
 * 100k services for a term in 1 name of 12): the exact total is kept with the version it was
 * counted at (services.sql.ts) and counted again only when that version moved, so a search repeated
 * while nothing changed in its scope (the dashboard's refresh, a CI poll) reads the page alone.
 */
export function createServicesList(sql: SqlPool) {
  const searchTotals = new Map<string, { version: string; total: number }>();

  async function run(
    statement: NonNullable<ReturnType<typeof servicesListStatement>>,
  ): Promise<{ rows: ServiceListRow[]; total: number | null; version: string | null }> {
    const result = await sql.query<ListResultRow>(statement);
    const first = result.rows[0];
    // An empty page still returns the total, as one row of NULL columns.
    const rows = result.rows
      .filter((row): row is ListResultRow & ServiceListRow => row.id !== null)
      .map(({ total: _total, version: _version, ...row }) => row);
    return { rows, total: first?.total ?? null, version: first?.version ?? null };
  }

  return async function list(
    scope: CustomerScope,
    query: ServiceListQuery,
  ): Promise<{ rows: ServiceListRow[]; total: number }> {
    const statement = servicesListStatement(scope, query);
    if (statement === null) return { rows: [], total: 0 };
    if (!query.search) {
      const { rows, total } = await run(statement);
      return { rows, total: total ?? 0 };
    }
    const key = JSON.stringify([scope, query.customerId ?? null, query.status ?? null, query.search]);
    const known = searchTotals.get(key);
    if (known) {
      const page = await run(servicesListStatement(scope, query, { countMatches: false })!);
      if (page.version === known.version) {
        // Most recently used last: the oldest entry is the first evicted.
        searchTotals.delete(key);
        searchTotals.set(key, known);
        return { rows: page.rows, total: known.total };
      }
    }
    const counted = await run(statement);
    const total = counted.total ?? 0;
    searchTotals.delete(key);
    if (counted.version !== null) searchTotals.set(key, { version: counted.version, total });
    if (searchTotals.size > SEARCH_TOTALS_KEPT) searchTotals.delete(searchTotals.keys().next().value!);
    return { rows: counted.rows, total };
  };
}
