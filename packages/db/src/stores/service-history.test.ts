import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../client.js';
import { migrate } from '../migrator.js';
import { createFreshDatabase, MIGRATIONS_DIR, type FreshDatabase } from '../testing/fresh-database.js';
import { keyringFromEnvironment } from '../vault/keyring-settings.js';
import { ALERT_RULES, createServiceAlertsStore } from './service-alerts.store.js';
import { createServiceMetricsStore, type MetricSample } from './service-metrics.store.js';

// Resource history (docs/health-and-resources.md#history) from what a customer reading a chart and
// an operator running several workers expect: a sample counts once in its bucket however often it
// is written, coarser points are exact merges of finer ones, old buckets go, and a threshold alert
// notifies once per streak. A database of its own: alerts and pruning look at every service.

const MINUTE = 60_000;
const T0 = new Date('2026-03-02T10:00:00.000Z');
const at = (minutes: number, seconds = 0) => new Date(T0.getTime() + minutes * MINUTE + seconds * 1000);

let fresh: FreshDatabase;
let replicas: Database[];

beforeAll(async () => {
  fresh = await createFreshDatabase('hostctl_service_history');
  await migrate(fresh.url, MIGRATIONS_DIR);
  const keys = keyringFromEnvironment(process.env);
  // Two pools, as two worker replicas would have.
  replicas = [
    createDatabase({ url: fresh.url, max: 4, keys }),
    createDatabase({ url: fresh.url, max: 4, keys }),
  ];
});
afterAll(async () => {
  await Promise.all(replicas?.map((replica) => replica.db.$disconnect()) ?? []);
  await fresh?.drop();
});

const database = () => replicas[0]!;
const metrics = () => createServiceMetricsStore(database().db);

async function newService(events: string[] = []): Promise<string> {
  const sql = database().sql;
  const { rows: customers } = await sql.query<{ id: string }>(
    `INSERT INTO customers (id, name, updated_at) VALUES (gen_random_uuid()::text, $1, now()) RETURNING id`,
    [`c-${randomUUID().slice(0, 8)}`],
  );
  const customerId = customers[0]!.id;
  const { rows } = await sql.query<{ id: string }>(
    `INSERT INTO services (id, name, customer_id, status, deploy_method, url, updated_at)
     VALUES (gen_random_uuid()::text, $1, $2, 'running', 'compose', 'http://x', now()) RETURNING id`,
    [`svc-${randomUUID().slice(0, 8)}`, customerId],
  );
  if (events.length > 0)
    await database().db.notificationSubscription.create({
      data: { customerId, url: 'https://hooks.example.test/h', events, secret: 's'.repeat(32) },
    });
  return rows[0]!.id;
}

const sample = (serviceId: string, values: Partial<MetricSample> = {}): MetricSample => ({
  serviceId,
  cpuPercent: 0,
  memoryMb: 0,
  memoryLimitMb: 0,
  networkRxBytes: 0,
  networkTxBytes: 0,
  restarts: 0,
  oomKills: 0,
  ...values,
});

const deliveries = (serviceId: string, event: string) =>
  database().db.notificationDelivery.findMany({
    where: { event, body: { path: ['service', 'id'], equals: serviceId } },
  });

describe('resource history', () => {
  it('merges samples into 5-minute and hourly buckets, once per sampling slot', async () => {
    const id = await newService();
    const cpu = [10, 30, 20];
    for (const [index, value] of cpu.entries())
      await metrics().recordSamples(at(index), [
        sample(id, { cpuPercent: value, memoryMb: 100 + index, networkRxBytes: 1000, restarts: index }),
      ]);
    // The same slot again (a retried statement, or a second leader): nothing changes.
    await metrics().recordSamples(at(2), [sample(id, { cpuPercent: 99, networkRxBytes: 1000, restarts: 5 })]);
    await Promise.all(
      replicas.map((replica) =>
        createServiceMetricsStore(replica.db).recordSamples(at(1), [sample(id, { cpuPercent: 99 })]),
      ),
    );

    const [point] = await metrics().series(id, at(0), at(5), '5m');
    expect(point).toMatchObject({
      start: at(0),
      samples: 3,
      cpuAvg: 20,
      cpuMax: 30,
      memoryAvgMb: 101,
      memoryMaxMb: 102,
      networkRxBytes: 3000,
      restarts: 3,
    });
    const [hourly] = await metrics().series(id, at(0), at(60), '1h');
    expect(hourly).toMatchObject({ start: at(0), samples: 3, cpuAvg: 20, networkRxBytes: 3000 });
  });

  it('a coarser resolution is the exact merge of the finer buckets (weighted by samples, not by buckets)', async () => {
    const id = await newService();
    // Bucket 10:00 gets one sample of 60 %, bucket 10:05 three of 0 %: the 15-minute average is
    // 15 % (60 / 4 samples), where averaging the two buckets' averages would say 30 %.
    await metrics().recordSamples(at(0), [sample(id, { cpuPercent: 60, memoryMb: 50, networkTxBytes: 7 })]);
    for (const minute of [5, 6, 7])
      await metrics().recordSamples(at(minute), [
        sample(id, { cpuPercent: 0, memoryMb: 10, networkTxBytes: 1 }),
      ]);
    await metrics().recordSamples(at(16), [sample(id, { cpuPercent: 8 })]);

    const points = await metrics().series(id, at(0), at(30), '15m');
    expect(points).toEqual([
      expect.objectContaining({
        start: at(0),
        samples: 4,
        cpuAvg: 15,
        cpuMax: 60,
        memoryAvgMb: 20,
        networkTxBytes: 10,
      }),
      expect.objectContaining({ start: at(15), samples: 1, cpuAvg: 8 }),
    ]);
    // [from, to) on bucket starts: the 10:15 bucket is out of a range ending at 10:15.
    expect(await metrics().series(id, at(0), at(15), '5m')).toHaveLength(2);
  });

  it('prunes 5-minute buckets after 8 days and hourly ones after 35, in bounded batches', async () => {
    const id = await newService();
    const now = new Date('2026-04-20T00:00:00.000Z');
    const daysAgo = (days: number) => new Date(now.getTime() - days * 86_400_000);
    for (const days of [40, 20, 9, 7]) await metrics().recordSamples(daysAgo(days), [sample(id)]);
    const counts = async () =>
      (
        await database().sql.query<{ width_s: number; n: string }>(
          `SELECT width_s, count(*) AS n FROM service_metric_buckets WHERE service_id = $1 GROUP BY 1 ORDER BY 1`,
          [id],
        )
      ).rows.map((row) => [row.width_s, Number(row.n)]);
    expect(await counts()).toEqual([
      [300, 4],
      [3600, 4],
    ]);
    // A batch of 1 per width: the 40-day-old buckets of both widths go first, one each.
    expect(await metrics().prune(now, 1)).toBe(2);
    while ((await metrics().prune(now, 1)) > 0);
    // Fine: 7 days kept. Coarse: 7, 9 and 20 days kept.
    expect(await counts()).toEqual([
      [300, 1],
      [3600, 3],
    ]);
  });
});

describe('threshold alerts', () => {
  const memory = (serviceId: string, memoryMb: number) => ({ serviceId, memoryMb, memoryLimitMb: 100 });

  it('service.memory_high: once after 3 samples in a row at 90 % of the limit, again only after the streak ends', async () => {
    const id = await newService(['service.memory_high']);
    const alerts = createServiceAlertsStore(database().db);
    const round = (mb: number) => alerts.evaluate([memory(id, mb)], new Date());

    expect(await round(95)).toEqual([]);
    expect(await round(89)).toEqual([]); // the streak broke before it was long enough
    expect(await round(90)).toEqual([]);
    expect(await round(92)).toEqual([]);
    expect((await round(99)).map((alert) => alert.kind)).toEqual(['memory_high']);
    for (let i = 0; i < 4; i++) expect(await round(99)).toEqual([]);
    const sent = await deliveries(id, 'service.memory_high');
    expect(sent).toHaveLength(1);
    expect(sent[0]!.body).toMatchObject({
      event: 'service.memory_high',
      alert: { memory_mb: 99, memory_limit_mb: 100, samples: ALERT_RULES.memoryHighSamples },
    });

    await round(50); // ends the streak
    for (let i = 0; i < 3; i++) await round(95);
    expect(await deliveries(id, 'service.memory_high')).toHaveLength(2);
  });

  it('service.restart_loop: 3 restarts within 15 minutes notify once, even from two workers at once', async () => {
    const id = await newService(['service.restart_loop']);
    const quiet = await newService(['service.restart_loop']);
    const now = new Date();
    await metrics().recordSamples(new Date(now.getTime() - 20 * MINUTE), [sample(quiet, { restarts: 5 })]);
    await metrics().recordSamples(new Date(now.getTime() - 6 * MINUTE), [sample(id, { restarts: 1 })]);
    await metrics().recordSamples(new Date(now.getTime() - MINUTE), [sample(id, { restarts: 2 })]);

    const rounds = await Promise.all(
      replicas.map((replica) => createServiceAlertsStore(replica.db).evaluate([], now)),
    );
    expect(rounds.flat().map((alert) => [alert.serviceId, alert.kind])).toEqual([[id, 'restart_loop']]);
    await createServiceAlertsStore(database().db).evaluate([], now);
    expect(await deliveries(id, 'service.restart_loop')).toHaveLength(1);
    // Restarts older than the window do not count.
    expect(await deliveries(quiet, 'service.restart_loop')).toHaveLength(0);
  });
});
