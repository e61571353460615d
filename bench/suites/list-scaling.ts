import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ServiceListQuery } from '@hostctl/db';
import { BENCH, ROOT } from '../lib/config.js';
import { growServices } from '../lib/data.js';
import { explainList } from '../lib/explain.js';
import { measure, sequentialLatency, type LoadResult } from '../lib/load.js';
import { printRow, row } from '../lib/report.js';
import { log, type BenchContext } from './context.js';

const SIZES = [1_000, 10_000, 100_000] as const;
const CONNECTIONS = 10;
/** "Flat": the median latency at 100k services at most this many times the one at 1k. */
const FLAT = 1.5;

interface Variant {
  name: string;
  http: Record<string, string>;
  store: Omit<ServiceListQuery, 'page' | 'perPage'>;
}

/**
 * 2. The same list request with 1k, 10k and 100k services: default order, each sort, each filter,
 * and search (a common and a rare substring). At 100k the SQL the store issues is captured and
 * explained, and the plans go to .data/bench/plans-100k.txt for docs/performance.md.
 */
export async function listScalingSuite(ctx: BenchContext): Promise<void> {
  const { rows } = await ctx.pool.query<{ id: string }>('SELECT id FROM customers ORDER BY name LIMIT 1');
  const bigCustomer = rows[0]!.id;
  const variants: Variant[] = [
    { name: 'default (created_at desc)', http: {}, store: { sort: 'created_at', order: 'desc' } },
    { name: 'sort=name', http: { sort: 'name', order: 'asc' }, store: { sort: 'name', order: 'asc' } },
    { name: 'sort=status', http: { sort: 'status' }, store: { sort: 'status', order: 'desc' } },
    { name: 'sort=updated_at', http: { sort: 'updated_at' }, store: { sort: 'updated_at', order: 'desc' } },
    {
      name: 'status=failed',
      http: { status: 'failed' },
      store: { sort: 'created_at', order: 'desc', status: 'failed' },
    },
    {
      name: 'customer_id (largest customer)',
      http: { customer_id: bigCustomer },
      store: { sort: 'created_at', order: 'desc', customerId: bigCustomer },
    },
    {
      name: 'search=shop (1 in 12 match)',
      http: { search: 'shop' },
      store: { sort: 'created_at', order: 'desc', search: 'shop' },
    },
    {
      name: 'search=000777 (1 match)',
      http: { search: '000777' },
      store: { sort: 'created_at', order: 'desc', search: '000777' },
    },
  ];

  type Measured = LoadResult & { medianMs: number; p90Ms: number };
  const results = new Map<string, Map<number, Measured>>(variants.map((v) => [v.name, new Map()]));
  for (const size of SIZES) {
    log(`list scaling: ${size.toLocaleString('en-US')} services`);
    await growServices(ctx.pool, size);
    for (const variant of variants) {
      const url = `${ctx.apiUrl}/api/services?${new URLSearchParams(variant.http).toString()}`;
      const headers = { authorization: ctx.authorization };
      const sequential = await sequentialLatency(url, headers);
      const loaded = await measure({
        url,
        connections: CONNECTIONS,
        durationS: BENCH.scalingDurationS,
        headers,
      });
      results.get(variant.name)!.set(size, { ...loaded, ...sequential });
    }
  }

  log('list scaling: EXPLAIN (ANALYZE, BUFFERS) of the store queries at 100k');
  const report: string[] = [];
  const sqlTimes = new Map<string, string>();
  for (const variant of variants) {
    const q = await explainList(ctx.pool, variant.store);
    sqlTimes.set(variant.name, `${q.executionMs.toFixed(2)} ms${q.fullScan ? ' (full scan)' : ''}`);
    report.push(
      `### ${variant.name} (${q.executionMs.toFixed(2)} ms${q.fullScan ? ', full scan' : ''})`,
      q.sql,
      `params: ${JSON.stringify(q.params)}`,
      q.plan,
      '',
    );
    if (q.fullScan) {
      ctx.notes.push(
        `list ${variant.name}: the list statement scans the whole services table at 100k (${q.executionMs.toFixed(1)} ms)`,
      );
    }
  }

  for (const variant of variants) {
    const bySize = results.get(variant.name)!;
    const small = bySize.get(1_000)!;
    const mid = bySize.get(10_000)!;
    const large = bySize.get(100_000)!;
    const r = row({
      section: 'list',
      name: `${variant.name}: median latency 100k vs 1k`,
      baseline: { label: '1k', value: small.medianMs, unit: 'ms' },
      figure: { value: large.medianMs, unit: 'ms' },
      target: { text: `ratio ≤ ${FLAT.toFixed(2)} (flat)`, met: large.medianMs <= FLAT * small.medianMs },
      note:
        `10k ${mid.medianMs.toFixed(2)} ms; p90 1k/10k/100k ${[small, mid, large].map((x) => x.p90Ms.toFixed(1)).join('/')} ms; ` +
        `@${CONNECTIONS}c req/s ${[small, mid, large].map((x) => Math.round(x.rps)).join('/')}, p99 ${[small, mid, large].map((x) => x.p99Ms).join('/')} ms; ` +
        `SQL at 100k (EXPLAIN ANALYZE): ${sqlTimes.get(variant.name) ?? '?'}`,
    });
    ctx.rows.push(r);
    printRow(r);
  }

  const dir = path.join(ROOT, '.data', 'bench');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'plans-100k.txt');
  writeFileSync(file, report.join('\n'));
  log(`query plans: ${path.relative(ROOT, file)}`);
}
