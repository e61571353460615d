import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_IMAGE } from './env.js';
import { operatorApi, waitDeployment, type Api } from './release-fixtures.js';
import { startStack, type Stack } from './stack.js';

/**
 * Issue 32, scheduled jobs (docs/jobs.md#schedules) through the real API, two workers and the
 * engine: every scheduled time becomes exactly one run, in a container of the service's release.
 * By default the schedule fires every 10 seconds for about 70 s (a six-field expression, allowed by
 * SCHEDULE_MIN_INTERVAL_SECONDS=10 in this stack); the 5-minute proof with a minutely
 * schedule is the same test with SCHEDULE_E2E_CRON='* * * * *' SCHEDULE_E2E_SECONDS=330
 * (docs/jobs.md#the-five-minute-proof).
 */
const CRON = process.env.SCHEDULE_E2E_CRON ?? '*/10 * * * * *';
const WATCH_SECONDS = Number(process.env.SCHEDULE_E2E_SECONDS ?? 70);
const STEP_MS = CRON.trim().split(/\s+/).length === 6 ? 10_000 : 60_000;

interface RunView {
  id: string;
  status: string;
  exit_code: number | null;
  scheduled_for: string | null;
  started_at: string | null;
  attempt: number;
  output?: string;
}

let stack: Stack;
let a: { api: Api; customerId: string };
let serviceId = '';

beforeAll(async () => {
  stack = await startStack({
    workers: 2,
    extraEnv: { SCHEDULE_MIN_INTERVAL_SECONDS: '10', SCHEDULER_INTERVAL_MS: '500' },
  });
  a = await operatorApi(stack, 'sched-a');
  const created = await a.api.post<{ id: string; deploy_job_id: string }>('/api/services', {
    name: `sched-${Date.now().toString(36)}`,
    customer_id: a.customerId,
    deploy_method: 'compose',
    compose: `services:\n  web:\n    image: ${TEST_IMAGE}\n    command: ["sleep", "2147483647"]\n    environment:\n      GREETING: "\${GREETING}"\n`,
    variables: { GREETING: 'scheduled hello' },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  serviceId = created.body.id;
  expect((await waitDeployment(a.api, created.body.deploy_job_id)).status).toBe('succeeded');
}, 300_000);

afterAll(async () => {
  if (serviceId) await a?.api.delete(`/api/services/${serviceId}`);
  await stack?.stop();
});

describe('a schedule with two workers', () => {
  it(
    'runs exactly once per scheduled time, each run in the release with its variables',
    async () => {
      const created = await a.api.post<{ id: string }>(`/api/services/${serviceId}/schedules`, {
        name: 'greeter',
        cron: CRON,
        command: ['sh', '-c', 'echo $GREETING'],
        overlap_policy: 'allow',
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      await new Promise((resolve) => setTimeout(resolve, WATCH_SECONDS * 1000));
      await a.api.request('PATCH', `/api/schedules/${created.body.id}`, { enabled: false });
      // Let the last runs finish.
      await new Promise((resolve) => setTimeout(resolve, 10_000));
      const page = await a.api.get<{ data: RunView[]; total: number }>(
        `/api/schedules/${created.body.id}/runs?per_page=100`,
      );
      expect(page.status).toBe(200);
      const times = page.body.data.map((run) => run.scheduled_for).sort();
      expect(new Set(times).size, JSON.stringify(page.body.data)).toBe(times.length);
      expect(times.length).toBeGreaterThanOrEqual(Math.floor((WATCH_SECONDS * 1000) / STEP_MS) - 1);
      // Consecutive times of the expression: none skipped, none twice.
      const steps = times.slice(1).map((time, i) => Date.parse(time!) - Date.parse(times[i]!));
      expect(new Set(steps)).toEqual(new Set([STEP_MS]));
      for (const run of page.body.data) {
        expect(run, JSON.stringify(run)).toMatchObject({ status: 'succeeded', exit_code: 0, attempt: 1 });
        // Started within a few seconds of its time (the tick is 500 ms; container start takes the rest).
        expect(Date.parse(run.started_at!) - Date.parse(run.scheduled_for!)).toBeLessThan(STEP_MS);
      }
      const one = await a.api.get<RunView>(`/api/runs/${page.body.data[0]!.id}`);
      expect(one.body.output).toBe('scheduled hello\n');
    },
    WATCH_SECONDS * 1000 + 120_000,
  );
});
