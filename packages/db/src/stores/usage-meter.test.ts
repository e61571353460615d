import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../client.js';
import { migrate } from '../migrator.js';
import { createFreshDatabase, MIGRATIONS_DIR, type FreshDatabase } from '../testing/fresh-database.js';
import { keyringFromEnvironment } from '../vault/keyring-settings.js';
import { createUsageMeterStore } from './usage-meter.store.js';

// Metering (docs/metering.md) from what a billing system needs: every second a service holds
// capacity is counted once, in the hour it falls in, whoever writes the service row; an hour is
// closed once however many workers close at the same time; each closed hour tells the operator.
// A database of its own: the watermark is global, and these tests move it.

const HOUR = 60 * 60 * 1000;
const H0 = new Date('2026-01-05T10:00:00.000Z');
const at = (hours: number, minutes = 0) => new Date(H0.getTime() + hours * HOUR + minutes * 60_000);

let fresh: FreshDatabase;
let database: Database;
let platformCustomerId: string;

async function newCustomer(name = `c-${randomUUID().slice(0, 8)}`): Promise<string> {
  const { rows } = await database.sql.query<{ id: string }>(
    `INSERT INTO customers (id, name, updated_at) VALUES (gen_random_uuid()::text, $1, now()) RETURNING id`,
    [name],
  );
  return rows[0]!.id;
}

async function newService(customerId: string, status: string): Promise<string> {
  const { rows } = await database.sql.query<{ id: string }>(
    `INSERT INTO services (id, name, customer_id, status, deploy_method, url, updated_at,
       containers, claimed_memory_mb, claimed_millicpus)
     VALUES (gen_random_uuid()::text, $1, $2, $3::"ServiceStatus", 'compose', 'http://x', now(), 1, 256, 500)
     RETURNING id`,
    [`svc-${randomUUID().slice(0, 8)}`, customerId, status],
  );
  return rows[0]!.id;
}

interface Span {
  containers: number;
  memory_mb: number;
  millicpus: number;
  open: boolean;
}
const spansOf = async (serviceId: string): Promise<Span[]> =>
  (
    await database.sql.query<Span>(
      `SELECT containers, memory_mb, millicpus, ended_at IS NULL AS open
       FROM service_usage_intervals WHERE service_id = $1 ORDER BY id`,
      [serviceId],
    )
  ).rows;

/** A span written as the trigger would have, at chosen times. */
async function addSpan(
  serviceId: string,
  customerId: string,
  from: Date,
  to: Date | null,
  claim: { containers: number; memoryMb: number; millicpus: number },
) {
  await database.sql.query(
    `INSERT INTO service_usage_intervals (service_id, customer_id, started_at, ended_at, containers, memory_mb, millicpus)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [serviceId, customerId, from, to, claim.containers, claim.memoryMb, claim.millicpus],
  );
}

async function setWatermark(to: Date) {
  await database.sql.query(`UPDATE usage_watermark SET closed_through = $1 WHERE id = 1`, [to]);
}

const recordsOf = async (customerId: string) =>
  (
    await database.sql.query<{
      service_id: string;
      period_start: Date;
      container_seconds: string;
      memory_mb_seconds: string;
      millicpu_seconds: string;
      deploys: number;
    }>(
      `SELECT service_id, period_start, container_seconds, memory_mb_seconds, millicpu_seconds, deploys
       FROM usage_records WHERE customer_id = $1 ORDER BY period_start, service_id`,
      [customerId],
    )
  ).rows.map((row) => ({
    service: row.service_id,
    hour: (row.period_start.getTime() - H0.getTime()) / HOUR,
    containerSeconds: Number(row.container_seconds),
    memoryMbSeconds: Number(row.memory_mb_seconds),
    millicpuSeconds: Number(row.millicpu_seconds),
    deploys: row.deploys,
  }));

beforeAll(async () => {
  fresh = await createFreshDatabase('hostctl_metering');
  await migrate(fresh.url, MIGRATIONS_DIR);
  database = createDatabase({ url: fresh.url, max: 8, keys: keyringFromEnvironment(process.env) });
  platformCustomerId = await newCustomer('operator');
  await database.db.notificationSubscription.create({
    data: {
      customerId: platformCustomerId,
      url: 'https://billing.example.test/hook',
      events: ['usage.period_closed'],
      secret: 's'.repeat(32),
    },
  });
});
afterAll(async () => {
  await database?.db.$disconnect();
  await fresh?.drop();
});

describe('usage spans, kept by the trigger on services', () => {
  it('opens a span while the service holds capacity and splits it only when the claim or that changes', async () => {
    const customer = await newCustomer();
    const service = await newService(customer, 'deploying');
    const update = (set: string) => database.sql.query(`UPDATE services SET ${set} WHERE id = $1`, [service]);
    expect(await spansOf(service)).toEqual([{ containers: 1, memory_mb: 256, millicpus: 500, open: true }]);

    await update(`status = 'running'`); // a first deploy succeeding: still the same claim
    await update(`cpu_usage = 0.5, memory_usage_mb = 100, health_status = 'healthy'`); // telemetry
    expect(await spansOf(service)).toHaveLength(1);

    await update(`containers = 3, claimed_memory_mb = 768, claimed_millicpus = 1500`); // scaled
    await update(`status = 'stopped'`);
    await update(`status = 'failed'`); // nothing runs either way: no span
    await update(`status = 'running'`);
    await update(`deleted_at = now()`);
    expect(await spansOf(service)).toEqual([
      { containers: 1, memory_mb: 256, millicpus: 500, open: false },
      { containers: 3, memory_mb: 768, millicpus: 1500, open: false },
      { containers: 3, memory_mb: 768, millicpus: 1500, open: false },
    ]);
  });

  it('never opens one for a failed or stopped service, and closes it when the row is removed outright', async () => {
    const customer = await newCustomer();
    expect(await spansOf(await newService(customer, 'failed'))).toEqual([]);
    expect(await spansOf(await newService(customer, 'stopped'))).toEqual([]);
    const removed = await newService(customer, 'running');
    await database.sql.query(`DELETE FROM services WHERE id = $1`, [removed]);
    expect((await spansOf(removed)).map((span) => span.open)).toEqual([false]);
  });
});

describe('closing hours', () => {
  it('counts each second in the hour it falls in, weighted by the claim, with the deploys of the hour', async () => {
    const customer = await newCustomer();
    const [a, b] = [await newService(customer, 'running'), await newService(customer, 'running')];
    await database.sql.query(`DELETE FROM service_usage_intervals WHERE service_id IN ($1, $2)`, [a, b]);
    // a: 10:30–11:15 with 2 containers; b: open since 10:45 with 1.
    await addSpan(a, customer, at(0, 30), at(1, 15), { containers: 2, memoryMb: 512, millicpus: 1000 });
    await addSpan(b, customer, at(0, 45), null, { containers: 1, memoryMb: 128, millicpus: 250 });
    await database.sql.query(
      `INSERT INTO deployments (id, service_id, trigger, status, created_at) VALUES
         (gen_random_uuid()::text, $1, 'api', 'succeeded', $2),
         (gen_random_uuid()::text, $1, 'api', 'succeeded', $3)`,
      [a, at(0, 40), at(1, 0)],
    );
    await setWatermark(H0);

    const store = createUsageMeterStore(database.db, { platformCustomerId });
    // 12:05 with a 2-minute delay: 10:00 and 11:00 are due, 12:00 is not.
    const closed = await store.closeDue(at(2, 5), 2 * 60_000, 24);
    expect(closed.map((period) => period.periodStart.toISOString())).toEqual([
      H0.toISOString(),
      at(1).toISOString(),
    ]);

    const mine = (await recordsOf(customer)).filter((row) => row.service === a || row.service === b);
    expect(mine).toEqual(
      [
        {
          service: a,
          hour: 0,
          containerSeconds: 3600,
          memoryMbSeconds: 921_600,
          millicpuSeconds: 1_800_000,
          deploys: 1,
        },
        {
          service: b,
          hour: 0,
          containerSeconds: 900,
          memoryMbSeconds: 115_200,
          millicpuSeconds: 225_000,
          deploys: 0,
        },
        {
          service: a,
          hour: 1,
          containerSeconds: 1800,
          memoryMbSeconds: 460_800,
          millicpuSeconds: 900_000,
          deploys: 1,
        },
        {
          service: b,
          hour: 1,
          containerSeconds: 3600,
          memoryMbSeconds: 460_800,
          millicpuSeconds: 900_000,
          deploys: 0,
        },
      ].sort((x, y) => x.hour - y.hour || x.service.localeCompare(y.service)),
    );
    // Nothing more is due until 13:02; 12:00 is not due at 13:01 either.
    expect(await store.closeDue(at(3, 1), 2 * 60_000, 24)).toEqual([]);
  });

  it('closes each hour exactly once while four workers close at the same time, and tells the operator once per customer and hour', async () => {
    const customers = [await newCustomer(), await newCustomer()];
    const start = at(100);
    for (const customer of customers) {
      const service = await newService(customer, 'running');
      await database.sql.query(`DELETE FROM service_usage_intervals WHERE service_id = $1`, [service]);
      await addSpan(service, customer, start, null, { containers: 1, memoryMb: 64, millicpus: 100 });
    }
    await database.sql.query(`DELETE FROM notification_deliveries`);
    await setWatermark(start);

    const now = new Date(start.getTime() + 6 * HOUR + 10 * 60_000);
    const workers = Array.from({ length: 4 }, () =>
      createUsageMeterStore(database.db, { platformCustomerId }),
    );
    const closedBy = await Promise.all(workers.map((store) => store.closeDue(now, 2 * 60_000, 24)));
    // Whoever closed what: together, the six hours, each once.
    const hours = closedBy.flat().map((period) => (period.periodStart.getTime() - start.getTime()) / HOUR);
    expect(hours.sort((x, y) => x - y)).toEqual([0, 1, 2, 3, 4, 5]);

    for (const customer of customers) {
      const rows = await recordsOf(customer);
      expect(rows.map((row) => row.containerSeconds)).toEqual([3600, 3600, 3600, 3600, 3600, 3600]);
    }
    const { rows: deliveries } = await database.sql.query<{ body: { usage: Record<string, unknown> } }>(
      `SELECT body FROM notification_deliveries WHERE event = 'usage.period_closed'`,
    );
    const told = deliveries
      .map(
        (delivery) =>
          `${String(delivery.body.usage.customer_id)}@${String(delivery.body.usage.period_start)}`,
      )
      .filter((key) => customers.some((customer) => key.startsWith(customer)));
    expect(told).toHaveLength(12);
    expect(new Set(told).size).toBe(12);
    const first = deliveries.find((delivery) => delivery.body.usage.customer_id === customers[0]);
    expect(first?.body.usage).toMatchObject({
      container_seconds: 3600,
      memory_mb_seconds: 230_400,
      cpu_seconds: 360,
    });
  });
});
