import type { CustomerScope } from '@hostctl/auth-policy';
import type { ServiceStatus } from '@hostctl/domain';
import { customerWhere } from './scope-where.js';

export type ServiceSort = 'name' | 'status' | 'created_at' | 'updated_at';

export interface ServiceListQuery {
  page: number;
  perPage: number;
  status?: ServiceStatus;
  customerId?: string;
  sort: ServiceSort;
  order: 'asc' | 'desc';
  search?: string;
}

export interface SqlStatement {
  /** Set for statements worth preparing once per connection (pg then reuses the parsed query). */
  name?: string;
  text: string;
  values: unknown[];
}

/**
 * Sort keys to the column and its name in LIST_COLUMNS: no text of the request reaches the SQL
 * except through this table or as a parameter.
 */
const SORT_COLUMNS: Record<ServiceSort, { column: string; output: string }> = {
  name: { column: 's.name', output: 'p.name' },
  status: { column: 's.status', output: 'p.status' },
  created_at: { column: 's.created_at', output: 'p."createdAt"' },
  updated_at: { column: 's.updated_at', output: 'p."updatedAt"' },
};

/** The columns a list item shows: never the compose document or variables of every row on a page. */
const LIST_COLUMNS = `s.id, s.name, s.status, s.url, s.customer_id AS "customerId",
  s.template_id AS "templateId", s.deploy_method AS "deployMethod",
  s.created_at AS "createdAt", s.updated_at AS "updatedAt", s.cpu_usage AS "cpuUsage",
  s.memory_usage_mb AS "memoryUsageMb", s.memory_limit_mb AS "memoryLimitMb"`;

/**
 * One statement for a list page and its `total`: the total row LEFT JOINed to the page, so an empty
 * page (past the end) still carries the total. Without a search the total is a sum over
 * service_counts (kept by a trigger), so it costs the same at 100k services as at 1k. A search
 * counts its matches, and its statement also returns `version`: the sum of service_counts.changes
 * over the rows in scope, which moves whenever a live service those rows count is added, removed,
 * moved or renamed. With `countMatches: false` it returns `total` NULL and only the version, for a
 * caller that holds the total counted at that version (services.store.ts). Returns null when the
 * scope can see nothing of the query.
 */
export function servicesListStatement(
  scope: CustomerScope,
  query: ServiceListQuery,
  options: { countMatches?: boolean } = {},
): SqlStatement | null {
  const tenant = customerWhere(scope);
  if (tenant === null) return null;
  const asked = query.customerId;
  if (tenant.customerId !== undefined && asked !== undefined && asked !== tenant.customerId) return null;
  const customerId = tenant.customerId ?? asked;
  const values: unknown[] = [];
  const param = (value: unknown): string => `$${values.push(value)}`;

  const filters: string[] = [];
  if (customerId !== undefined) filters.push(`customer_id = ${param(customerId)}`);
  if (query.status !== undefined) filters.push(`status = ${param(query.status)}::"ServiceStatus"`);
  const search = query.search ? `s.name ILIKE ${param(`%${escapeLike(query.search)}%`)}` : null;

  const serviceWhere = ['s.deleted_at IS NULL', ...filters.map((f) => `s.${f}`), ...(search ? [search] : [])];
  const countsWhere = filters.length > 0 ? `WHERE ${filters.map((f) => `c.${f}`).join(' AND ')}` : '';
  const matches =
    options.countMatches === false
      ? 'NULL::int'
      : `(SELECT count(*)::int FROM services s WHERE ${serviceWhere.join(' AND ')})`;
  const total =
    search === null
      ? `SELECT COALESCE(sum(c.live), 0)::int AS total FROM service_counts c ${countsWhere}`
      : `SELECT COALESCE(sum(c.changes), 0)::text AS version, ${matches} AS total
         FROM service_counts c ${countsWhere}`;

  const { column, output } = SORT_COLUMNS[query.sort];
  const direction = query.order === 'asc' ? 'ASC' : 'DESC';
  // id breaks ties so pages stay stable; the outer ORDER BY repeats the order for the joined rows.
  const limit = param(query.perPage);
  const offset = param((query.page - 1) * query.perPage);
  const text = `SELECT t.*, p.* FROM (${total}) t
    LEFT JOIN LATERAL (
      SELECT ${LIST_COLUMNS} FROM services s WHERE ${serviceWhere.join(' AND ')}
      ORDER BY ${column} ${direction}, s.id ${direction} LIMIT ${limit} OFFSET ${offset}
    ) p ON true
    ORDER BY ${output} ${direction}, p.id ${direction}`;
  if (search !== null) return { text, values };
  // Without a search the text depends only on these, so each shape is prepared once per
  // connection. A search is left unprepared: its plan must see the pattern to use the trigram index.
  const shape = [
    query.sort,
    direction,
    customerId !== undefined ? 'customer' : '',
    query.status !== undefined ? 'status' : '',
  ];
  return { name: `services-list:${shape.join(':')}`, text, values };
}

/** `search` is a substring, not a pattern: %, _ and \ match themselves. */
function escapeLike(term: string): string {
  return term.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** Every column of services, named as Prisma's Service type names them. */
const SERVICE_COLUMNS = `s.id, s.name, s.customer_id AS "customerId", s.status, s.deploy_method AS "deployMethod",
  s.template_id AS "templateId", s.compose, s.variables,
  s.secret_names AS "secretNames", s.variables_version AS "variablesVersion", s.git_url AS "gitUrl",
  s.git_branch AS "gitBranch",
  s.ai_url AS "aiUrl", s.custom_domains AS "customDomains",
  s.https_redirect AS "httpsRedirect", s.hsts_max_age AS "hstsMaxAge", s.url, s.health_status AS "healthStatus",
  s.health_last_check AS "healthLastCheck", s.health_consecutive_failures AS "healthConsecutiveFailures",
  s.cpu_usage AS "cpuUsage", s.memory_usage_mb AS "memoryUsageMb", s.memory_limit_mb AS "memoryLimitMb",
  s.cpu_limit AS "cpuLimit", s.storage_mb AS "storageMb", s.containers,
  s.claimed_memory_mb AS "claimedMemoryMb", s.claimed_millicpus AS "claimedMillicpus", s.deployed_at AS "deployedAt",
  s.created_at AS "createdAt", s.updated_at AS "updatedAt", s.deleted_at AS "deletedAt", s.purged_at AS "purgedAt"`;

/**
 * One live service with its customer's name, inside the scope: every route on a service reads it
 * first (to answer 404 for what the caller may not see), so it is one statement on the pg pool.
 * `withGroups` adds the attached variable groups' ids in attach order (`groupIds`): the detail
 * needs them, and a second round trip per detail halved its throughput (docs/performance.md).
 */
export function serviceByIdStatement(
  scope: CustomerScope,
  id: string,
  options: { withGroups?: boolean } = {},
): SqlStatement | null {
  const tenant = customerWhere(scope);
  if (tenant === null) return null;
  const isScoped = tenant.customerId !== undefined;
  const groups = options.withGroups
    ? `, ARRAY(SELECT g.group_id FROM service_variable_groups g WHERE g.service_id = s.id
         ORDER BY g.position) AS "groupIds"`
    : '';
  return {
    name: `services-by-id:${isScoped ? 'customer' : 'all'}${options.withGroups ? ':groups' : ''}`,
    text: `SELECT ${SERVICE_COLUMNS}, json_build_object('name', c.name) AS customer${groups}
           FROM services s JOIN customers c ON c.id = s.customer_id
           WHERE s.id = $1 AND s.deleted_at IS NULL ${isScoped ? 'AND s.customer_id = $2' : ''}`,
    values: isScoped ? [id, tenant.customerId] : [id],
  };
}
