import { customerScope, scopeAllows, type Principal } from '@hostctl/auth-policy';
import type { UsageGranularity, UsageRow, UsageStore } from '@hostctl/db';
import { DomainError, LIMITS, validationError } from '@hostctl/domain';
import { parseTimestamp } from '../../http/input-bounds.js';
import type { UsageQuery } from './usage.schemas.js';

const HOUR_MS = 60 * 60 * 1000;
/** The longest range per granularity: an answer stays a few thousand rows per service. */
const MAX_RANGE_MS: Record<UsageGranularity, number> = {
  hour: 31 * 24 * HOUR_MS,
  day: 366 * 24 * HOUR_MS,
  month: 5 * 366 * 24 * HOUR_MS,
};
/** A CSV export is one document: beyond this many rows the caller narrows the range. */
const CSV_MAX_ROWS = 50_000;

const CSV_HEADER =
  'period_start,service_id,service_name,container_seconds,memory_mb_seconds,cpu_seconds,deploys';

const figuresOf = (row: Omit<UsageRow, 'periodStart' | 'serviceId' | 'serviceName'>) => ({
  container_seconds: row.containerSeconds,
  memory_mb_seconds: row.memoryMbSeconds,
  cpu_seconds: row.millicpuSeconds / 1000,
  deploys: row.deploys,
});

/** RFC 4180 field: quoted when it holds a comma, quote or line break; a leading =+-@ is defused for spreadsheets. */
function csvField(value: string | number | null): string {
  if (value === null) return '';
  let text = String(value);
  if (typeof value === 'string' && /^[=+\-@]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** A customer's metered usage (docs/metering.md#api), read like its quota. */
export function createUsageService(deps: {
  store: UsageStore;
  customerExists(id: string): Promise<boolean>;
}) {
  function rangeOf(query: UsageQuery, now: Date) {
    const granularity = query.granularity ?? 'day';
    // parseTimestamp reads a leap second (…:60Z, valid RFC 3339) as the second before it.
    const to = query.to ? parseTimestamp(query.to) : now;
    const from = query.from
      ? parseTimestamp(query.from)
      : new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
    if (from.getTime() >= to.getTime()) throw validationError('/querystring/from', 'must be before to');
    if (to.getTime() - from.getTime() > MAX_RANGE_MS[granularity]) {
      const days = MAX_RANGE_MS[granularity] / (24 * HOUR_MS);
      throw validationError('/querystring/to', `a ${granularity} report spans at most ${days} days`);
    }
    return { from, to, granularity };
  }

  return {
    async report(principal: Principal, customerId: string, query: UsageQuery, now = new Date()) {
      if (!scopeAllows(customerScope(principal), customerId) || !(await deps.customerExists(customerId)))
        throw new DomainError('not_found', `customer ${customerId} not found`);
      const range = rangeOf(query, now);
      const csv = query.format === 'csv';
      const page = csv ? 1 : (query.page ?? 1);
      const perPage = csv ? CSV_MAX_ROWS + 1 : (query.per_page ?? LIMITS.perPageDefault);
      const [report, closedThrough] = await Promise.all([
        deps.store.report({ customerId, ...range }, { limit: perPage, offset: (page - 1) * perPage }),
        deps.store.closedThrough(),
      ]);
      if (csv) {
        if (report.total > CSV_MAX_ROWS)
          throw validationError(
            '/querystring/to',
            `the range has ${report.total} rows, more than one export holds (${CSV_MAX_ROWS}); narrow from/to or use a coarser granularity`,
          );
        const lines = report.rows.map((row) => {
          const figures = figuresOf(row);
          return [row.periodStart.toISOString(), row.serviceId, row.serviceName, ...Object.values(figures)]
            .map(csvField)
            .join(',');
        });
        return { csv: [CSV_HEADER, ...lines].join('\r\n') + '\r\n', json: undefined };
      }
      return {
        csv: undefined,
        json: {
          customer_id: customerId,
          from: range.from.toISOString(),
          to: range.to.toISOString(),
          granularity: range.granularity,
          closed_through: closedThrough?.toISOString() ?? null,
          data: report.rows.map((row) => ({
            period_start: row.periodStart.toISOString(),
            service_id: row.serviceId,
            service_name: row.serviceName,
            ...figuresOf(row),
          })),
          totals: figuresOf(report.totals),
          total: report.total,
          page,
          per_page: perPage,
        },
      };
    },
  };
}

export type UsageService = ReturnType<typeof createUsageService>;
