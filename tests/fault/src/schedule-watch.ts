import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Db } from '@hostctl/db';
import type { FaultClient } from './fault-client.js';
import type { FaultReport } from './fault-report.js';
import { composeFor } from './request-ledger.js';

/**
 * Issue 32's fault check of scheduled jobs (docs/jobs.md#guarantees): a schedule that fires every
 * TICK_SECONDS through the whole run (workers SIGKILLed and SIGTERMed, Redis emptied, PostgreSQL
 * cut, the engine restarted). Afterwards every time between its first and last recorded one has
 * exactly one record, and every record is final: times are a database fact, not a Redis one, and
 * a run whose worker died is recorded failed rather than lost or run twice.
 */
export const TICK_SECONDS = 15;
const FINAL = new Set(['succeeded', 'failed', 'timed_out', 'missed', 'skipped', 'cancelled']);

export interface ScheduleWatch {
  serviceId: string;
  scheduleId: string;
  createdAt: Date;
}

async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what} within ${timeoutMs / 1000} s`);
    await sleep(500);
  }
}

/** A service of its own (not in the ledger: the traffic phase must not delete it) and its schedule. */
export async function startScheduleWatch(
  client: FaultClient,
  db: Db,
  customerId: string,
): Promise<ScheduleWatch> {
  const created = await client.post<{ id: string; deploy_job_id: string }>('/api/services', {
    name: `fault-schedule-${randomUUID().slice(0, 6)}`,
    customer_id: customerId,
    deploy_method: 'compose',
    compose: composeFor(2),
  });
  if (created.status !== 201) throw new Error(`creating the scheduled service answered ${created.status}`);
  await until('the scheduled service did not deploy', 180_000, async () => {
    const row = await db.deployment.findUnique({ where: { id: created.body.deploy_job_id } });
    if (row && !['queued', 'running'].includes(row.status) && row.status !== 'succeeded')
      throw new Error(`the scheduled service's deployment ended ${row.status}: ${row.error ?? ''}`);
    return row?.status === 'succeeded' ? true : undefined;
  });
  const schedule = await client.post<{ id: string }>(`/api/services/${created.body.id}/schedules`, {
    name: 'fault-tick',
    cron: `*/${TICK_SECONDS} * * * * *`,
    command: ['true'],
    timeout: 60,
  });
  if (schedule.status !== 201)
    throw new Error(`creating the schedule answered ${schedule.status}: ${JSON.stringify(schedule.body)}`);
  return { serviceId: created.body.id, scheduleId: schedule.body.id, createdAt: new Date() };
}

/** Stops the schedule, waits for its runs to end, checks its records, then deletes its service. */
export async function checkScheduleWatch(
  client: FaultClient,
  db: Db,
  watch: ScheduleWatch,
  report: FaultReport,
): Promise<void> {
  const disabled = await client.request('PATCH', `/api/schedules/${watch.scheduleId}`, { enabled: false });
  report.check(disabled.status === 200, `disabling the schedule answered ${disabled.status}`);
  const runs = await until('runs of the schedule still queued or running', 120_000, async () => {
    const rows = await db.serviceRun.findMany({
      where: { scheduleId: watch.scheduleId },
      select: { scheduledFor: true, attempt: true, status: true },
    });
    return rows.every((row) => FINAL.has(row.status)) ? rows : undefined;
  });
  const times = runs.filter((run) => run.scheduledFor !== null && run.attempt === 1);
  const seen = new Map<number, number>();
  for (const run of times)
    seen.set(run.scheduledFor!.getTime(), (seen.get(run.scheduledFor!.getTime()) ?? 0) + 1);
  const recorded = [...seen.keys()].sort((a, b) => a - b);
  const duplicates = [...seen].filter(([, count]) => count > 1).map(([at]) => new Date(at).toISOString());
  const gaps: string[] = [];
  for (let at = recorded[0] ?? 0; at < (recorded.at(-1) ?? 0); at += TICK_SECONDS * 1000)
    if (!seen.has(at)) gaps.push(new Date(at).toISOString());
  report.check(recorded.length >= 4, `the schedule recorded ${recorded.length} times during the run`);
  report.check(
    (recorded[0] ?? Infinity) - watch.createdAt.getTime() <= 2 * TICK_SECONDS * 1000,
    "the schedule's first time was not recorded within two ticks of its creation",
  );
  report.check(duplicates.length === 0, `scheduled times recorded twice: ${duplicates.join(', ')}`);
  report.check(gaps.length === 0, `scheduled times without a record: ${gaps.join(', ')}`);
  const byStatus = new Map<string, number>();
  for (const run of runs) byStatus.set(run.status, (byStatus.get(run.status) ?? 0) + 1);
  report.note(
    `schedule every ${TICK_SECONDS} s: ${recorded.length} times from ${new Date(recorded[0] ?? 0).toISOString()} to ${new Date(recorded.at(-1) ?? 0).toISOString()}, ${runs.length} records (${[...byStatus].map(([status, n]) => `${n} ${status}`).join(', ')}); ${duplicates.length} twice, ${gaps.length} missing`,
  );
  const deleted = await client.delete(`/api/services/${watch.serviceId}`);
  report.check(deleted.status === 204, `deleting the scheduled service answered ${deleted.status}`);
  await until('the scheduled service was not purged', 120_000, async () => {
    const row = await db.service.findUnique({ where: { id: watch.serviceId }, select: { purgedAt: true } });
    return row?.purgedAt ? true : undefined;
  });
}
