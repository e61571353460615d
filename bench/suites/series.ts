import { randomUUID } from 'node:crypto';
import { createDb, createServiceMetricsStore, keyringFromEnvironment, type Db } from '@hostctl/db';
import { assertBenchDatabase, BENCH } from '../lib/config.js';
import { compare } from '../lib/compare.js';
import { benchPool, migrateBenchDatabase } from '../lib/data.js';
import { row, type Row } from '../lib/report.js';
import { log } from './context.js';

/**
 * The resource history's read (docs/health-and-resources.md#history): 7 days of one service out
 * of 1,000 services that each have 7 days of 5-minute and hourly buckets (seeded with SQL, about
 * 2.2 million rows), read through the store the API's `GET /api/services/:id/metrics` calls,
 * against the primary-key read of one service row through the same client (the detail's own
 * query) in the same run. Goal (issue 31): under 50 ms at 1,000 services. Also prints what the
 * table costs per row and per service on disk.
 *
 * Needs only the bench database (migrated here), not the API, Redis or Docker.
 */
const SERVICES = 1000;
const DAYS = 7;
const TARGET_MS = 50;

export async function seriesSuite(ctx: { rows: Row[]; notes: string[] }): Promise<void> {
  assertBenchDatabase(BENCH.databaseUrl);
  await migrateBenchDatabase();
  const pool = benchPool(2);
  const db: Db = createDb({ url: BENCH.databaseUrl, max: 2, keys: keyringFromEnvironment(process.env) });
  let customerId: string | undefined;
  try {
    const { rows: customers } = await pool.query<{ id: string }>(
      `INSERT INTO customers (id, name, updated_at) VALUES (gen_random_uuid()::text, $1, now()) RETURNING id`,
      [`bench-series-${randomUUID().slice(0, 8)}`],
    );
    customerId = customers[0]!.id;
    const { rows: services } = await pool.query<{ id: string }>(
      `INSERT INTO services (id, name, customer_id, status, deploy_method, url, updated_at)
       SELECT gen_random_uuid()::text, 'bench-series-' || i || '-' || $2, $1, 'running', 'compose', 'http://bench.test', now()
       FROM generate_series(1, $3) AS i RETURNING id`,
      [customerId, randomUUID().slice(0, 6), SERVICES],
    );
    const ids = services.map((service) => service.id);
    const now = new Date();
    const seeded = Date.now();
    log(`series: seeding ${SERVICES} services × ${DAYS} days of 5-minute and hourly buckets`);
    // Every width in one statement per width; values vary so no page compresses better than real ones.
    for (const width of [300, 3600])
      await pool.query(
        `INSERT INTO service_metric_buckets (service_id, width_s, bucket_start, samples, cpu_sum, cpu_max,
           memory_sum_mb, memory_max_mb, memory_limit_mb, network_rx_bytes, network_tx_bytes, restarts,
           oom_kills, last_sample_at)
         SELECT s.id, $2, t, $2 / 30, random() * 1000, random() * 100, random() * 50000, random() * 512, 512,
                (random() * 1e7)::bigint, (random() * 1e7)::bigint, 0, 0, t
         FROM unnest($1::text[]) AS s(id)
         CROSS JOIN generate_series(date_bin(make_interval(secs => $2), $3::timestamptz - make_interval(days => $4),
           TIMESTAMPTZ '1970-01-01 00:00:00+00'), $3::timestamptz, make_interval(secs => $2)) AS t`,
        [ids, width, now, DAYS],
      );
    await pool.query('ANALYZE service_metric_buckets');
    const { rows: sizes } = await pool.query<{ n: string; bytes: string }>(
      `SELECT count(*) AS n, pg_total_relation_size('service_metric_buckets') AS bytes
       FROM service_metric_buckets`,
    );
    const count = Number(sizes[0]!.n);
    const bytes = Number(sizes[0]!.bytes);
    log(
      `series: ${count} rows, ${(bytes / 2 ** 20).toFixed(0)} MiB in ${((Date.now() - seeded) / 1000).toFixed(0)} s`,
    );

    const store = createServiceMetricsStore(db);
    const from = new Date(now.getTime() - DAYS * 86_400_000);
    let next = 0;
    const pickId = () => ids[(next = (next + 7) % ids.length)]!;
    const detail = () => db.service.findUniqueOrThrow({ where: { id: pickId() } });
    const fine = await compare(() => store.series(pickId(), from, now, '5m'), detail);
    const hourly = await compare(() => store.series(pickId(), from, now, '1h'), detail);
    const points = (await store.series(ids[0]!, from, now, '5m')).length;
    log(
      `series: 7 days at 5m (${points} points) ${fine.figure.toFixed(2)} ms, at 1h ${hourly.figure.toFixed(2)} ms; service row ${fine.baseline.toFixed(2)} ms`,
    );
    for (const [label, measured] of [
      ['5m', fine],
      ['1h', hourly],
    ] as const)
      ctx.rows.push(
        row({
          section: 'series',
          name: `7 days of one service at ${label}, ${SERVICES.toLocaleString('en-US')} services`,
          baseline: { label: 'one service row', value: measured.baseline, unit: 'ms' },
          figure: { value: measured.figure, unit: 'ms' },
          target: { text: `< ${TARGET_MS} ms`, met: measured.figure < TARGET_MS },
        }),
      );
    ctx.notes.push(
      `series: ${count.toLocaleString('en-US')} bucket rows take ${(bytes / 2 ** 20).toFixed(0)} MiB with indexes, ${(bytes / count).toFixed(0)} bytes a row`,
    );
  } finally {
    if (customerId) {
      await pool.query(`DELETE FROM services WHERE customer_id = $1`, [customerId]);
      await pool.query(`DELETE FROM customers WHERE id = $1`, [customerId]);
    }
    await db.$disconnect();
    await pool.end();
  }
}
