import { RUN_LABEL } from '@hostctl/domain';
import { beforeAll, describe, expect, it } from 'vitest';
import { waitFor, waitForDeployment } from '../testing/fixtures.js';
import { useWorkerApp } from '../testing/worker-fixture.js';

// Scheduled runs on the real engine (docs/jobs.md#overlap): a run the scheduler records
// `cancelled` (overlap policy replace) or whose schedule is deleted is stopped by the worker
// running it, which watches the row; the run processor is the one-off runs' own.
const worker = useWorkerApp('schedule-runs', {
  app: { readiness: { timeoutMs: 20_000, stableMs: 500 } },
});
const { db, runtime, app } = worker;
let serviceId = '';

beforeAll(async () => {
  const service = await worker.deploy({
    compose: 'services:\n  web:\n    image: local/busybox:1\n    command: ["sleep", "2147483647"]\n',
  });
  serviceId = service.serviceId;
  expect((await waitForDeployment(db, service.deploymentId)).status).toBe('succeeded');
}, 120_000);

async function runningScheduledRun() {
  const schedule = await db.serviceSchedule.create({
    data: {
      serviceId,
      name: `job-${Date.now().toString(36)}`,
      cron: '0 3 * * *',
      timeZone: 'UTC',
      command: ['sleep', '600'],
      timeoutSeconds: 900,
      overlapPolicy: 'replace',
      enabled: false,
      nextRunAt: new Date('2031-01-01T03:00:00Z'),
    },
  });
  const run = await db.serviceRun.create({
    data: {
      serviceId,
      scheduleId: schedule.id,
      scheduledFor: new Date(),
      command: schedule.command,
      timeoutSeconds: schedule.timeoutSeconds,
    },
  });
  await app.producer.enqueue('run', { runId: run.id });
  await waitFor(
    `run ${run.id} container`,
    async () => ((await runtime.listContainers({ [RUN_LABEL]: run.id })).length > 0 ? true : undefined),
    60_000,
  );
  return { scheduleId: schedule.id, runId: run.id };
}

const containerGone = (runId: string) =>
  waitFor(
    `run ${runId} container removed`,
    async () => ((await runtime.listContainers({ [RUN_LABEL]: runId })).length === 0 ? true : undefined),
    30_000,
  );

describe('stopping a scheduled run from the database', () => {
  it('stops a run recorded cancelled and keeps it cancelled', async () => {
    const { runId } = await runningScheduledRun();
    await db.serviceRun.update({
      where: { id: runId },
      data: { status: 'cancelled', error: 'replaced by the run scheduled for …', finishedAt: new Date() },
    });
    await containerGone(runId);
    // The processor's own outcome must not overwrite the cancellation.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(await db.serviceRun.findUniqueOrThrow({ where: { id: runId } })).toMatchObject({
      status: 'cancelled',
      error: 'replaced by the run scheduled for …',
    });
  });

  it('stops the run of a deleted schedule', async () => {
    const { scheduleId, runId } = await runningScheduledRun();
    await db.serviceSchedule.delete({ where: { id: scheduleId } });
    await containerGone(runId);
  });
});
