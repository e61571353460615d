import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Db } from '@hostctl/db';
import type { FaultReport } from './fault-report.js';

/**
 * Issue 31's metering fault test (docs/metering.md): usage records equal what the services held,
 * once each, however the workers that close the hours are killed and whatever happens to Redis.
 * A backlog of closed-to-be hours is planted before the chaos starts (the watermark moved back,
 * usage spans of three services of a customer of its own written in the past), so the workers
 * close them while they are SIGKILLed, SIGTERMed and Redis restarts; at the end every record of
 * those services is compared with the figure computed here from the same spans.
 */
const HOUR_MS = 60 * 60 * 1000;

interface Span {
  serviceId: string;
  startedAt: Date;
  /** null: still open (the service holds capacity now). */
  endedAt: Date | null;
  containers: number;
  memoryMb: number;
  millicpus: number;
}

export interface MeteringBacklog {
  customerId: string;
  serviceIds: string[];
  /** The first hour planted and the end of the last (the start of the hour the backlog was planted in). */
  from: Date;
  to: Date;
  spans: Span[];
  /** How long after planting the last planted hour was closed (null: not within 5 minutes). */
  closedAfterMs: Promise<number | null>;
}

/** Polls the watermark from the moment of planting: when the backlog is closed tells what it overlapped. */
async function watchClosing(db: Db, to: Date): Promise<number | null> {
  const planted = Date.now();
  while (Date.now() - planted < 300_000) {
    const [mark] = await db.$queryRaw<{ closedThrough: Date }[]>`
      SELECT closed_through AS "closedThrough" FROM usage_watermark WHERE id = 1`;
    if (mark && mark.closedThrough >= to) return Date.now() - planted;
    await sleep(250);
  }
  return null;
}

/** Plants `hours` hours of usage before the current hour and moves the watermark back to their start. */
export async function plantMeteringBacklog(db: Db, hours: number): Promise<MeteringBacklog> {
  const to = new Date(Math.floor(Date.now() / HOUR_MS) * HOUR_MS);
  const from = new Date(to.getTime() - hours * HOUR_MS);
  const customerId = randomUUID();
  await db.$executeRaw`INSERT INTO customers (id, name, updated_at) VALUES (${customerId}, ${`metering-${customerId.slice(0, 8)}`}, now())`;
  const serviceIds: string[] = [];
  // `stopped`: no span of their own from the trigger, and nothing for a runtime to run.
  for (let i = 0; i < 3; i++) {
    const id = randomUUID();
    await db.$executeRaw`INSERT INTO services (id, name, customer_id, status, deploy_method, url, updated_at)
      VALUES (${id}, ${`metered-${i}-${id.slice(0, 8)}`}, ${customerId}, 'stopped', 'compose', 'http://metered.invalid', now())`;
    serviceIds.push(id);
  }
  // Whole seconds, so every figure is an integer and rounding cannot differ between here and SQL.
  const at = (hour: number, seconds: number) => new Date(from.getTime() + hour * HOUR_MS + seconds * 1000);
  const spans: Span[] = [];
  const [a, b, c] = serviceIds as [string, string, string];
  for (let hour = 0; hour < hours; hour += 7) {
    // Across an hour boundary, then scaled (a second span right after), then stopped.
    spans.push({
      serviceId: a,
      startedAt: at(hour, 1800),
      endedAt: at(hour + 1, 600),
      containers: 2,
      memoryMb: 256,
      millicpus: 500,
    });
    spans.push({
      serviceId: a,
      startedAt: at(hour + 1, 600),
      endedAt: at(hour + 2, 17),
      containers: 3,
      memoryMb: 384,
      millicpus: 750,
    });
    // Short spans inside one hour.
    spans.push({
      serviceId: b,
      startedAt: at(hour + 3, 5),
      endedAt: at(hour + 3, 65),
      containers: 1,
      memoryMb: 128,
      millicpus: 250,
    });
  }
  // Open since the backlog's second hour: it counts in every hour after, clipped to each.
  spans.push({
    serviceId: c,
    startedAt: at(1, 1234),
    endedAt: null,
    containers: 1,
    memoryMb: 512,
    millicpus: 1000,
  });
  for (const span of spans)
    await db.$executeRaw`INSERT INTO service_usage_intervals (service_id, customer_id, started_at, ended_at, containers, memory_mb, millicpus)
      VALUES (${span.serviceId}, ${customerId}, ${span.startedAt}, ${span.endedAt}, ${span.containers}, ${span.memoryMb}, ${span.millicpus})`;
  await db.$executeRaw`UPDATE usage_watermark SET closed_through = ${from} WHERE id = 1`;
  const closedAfterMs = watchClosing(db, to).catch(() => null);
  return { customerId, serviceIds, from, to, spans, closedAfterMs };
}

/** The records the closer must write for the backlog: `${service} ${hour start ms}` → figures. */
function expectedRecords(backlog: MeteringBacklog): Map<string, [number, number, number]> {
  const expected = new Map<string, [number, number, number]>();
  for (let start = backlog.from.getTime(); start < backlog.to.getTime(); start += HOUR_MS) {
    const end = start + HOUR_MS;
    for (const span of backlog.spans) {
      const seconds =
        (Math.min(span.endedAt?.getTime() ?? end, end) - Math.max(span.startedAt.getTime(), start)) / 1000;
      if (span.startedAt.getTime() >= end || seconds <= 0) continue;
      const key = `${span.serviceId} ${start}`;
      const [containers, memory, cpu] = expected.get(key) ?? [0, 0, 0];
      expected.set(key, [
        containers + span.containers * seconds,
        memory + span.memoryMb * seconds,
        cpu + span.millicpus * seconds,
      ]);
    }
  }
  return expected;
}

/** Waits for the backlog's hours to be closed, then compares every record of its services. */
export async function checkMeteringBacklog(
  db: Db,
  backlog: MeteringBacklog,
  report: FaultReport,
): Promise<void> {
  const closedAfterMs = await backlog.closedAfterMs;
  if (closedAfterMs === null) {
    report.fail('metering: the planted hours were not closed within 5 minutes of planting');
    return;
  }
  const rows = await db.$queryRaw<
    { serviceId: string; periodStart: Date; containers: bigint; memory: bigint; cpu: bigint }[]
  >`SELECT service_id AS "serviceId", period_start AS "periodStart", container_seconds AS containers,
      memory_mb_seconds AS memory, millicpu_seconds AS cpu
    FROM usage_records WHERE service_id = ANY(${backlog.serviceIds}) AND period_start < ${backlog.to}`;
  const expected = expectedRecords(backlog);
  const wrong: string[] = [];
  for (const row of rows) {
    const key = `${row.serviceId} ${row.periodStart.getTime()}`;
    const want = expected.get(key);
    const got = [Number(row.containers), Number(row.memory), Number(row.cpu)];
    if (!want) wrong.push(`${key}: a record for an hour without usage`);
    else if (want.some((value, i) => value !== got[i]))
      wrong.push(`${key}: ${got.join('/')} instead of ${want.join('/')}`);
  }
  const missing = [...expected.keys()].filter(
    (key) => !rows.some((row) => `${row.serviceId} ${row.periodStart.getTime()}` === key),
  );
  report.check(
    wrong.length === 0,
    `metering: records differ from the spans: ${wrong.slice(0, 5).join('; ')}`,
  );
  report.check(
    missing.length === 0,
    `metering: hours without their record: ${missing.slice(0, 5).join('; ')}`,
  );
  const hours = Math.round((backlog.to.getTime() - backlog.from.getTime()) / HOUR_MS);
  report.note(
    `metering: ${hours} planted hours closed ${(closedAfterMs / 1000).toFixed(1)} s after planting (the phase after it started then); ${rows.length} records of ${backlog.serviceIds.length} services, ${wrong.length} wrong, ${missing.length} missing`,
  );
}
