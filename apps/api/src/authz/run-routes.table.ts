import { addDeployment } from '../test-support/releases.js';
import type { Fixtures } from './authz-fixtures.js';
import { one, writeA, type RouteEntry } from './route-expectations.js';
import { SCHEDULE_ROUTES } from './schedule-routes.table.js';

// One-off runs of customer A (docs/jobs.md): every route needs `services:operate`, reads included
// (a run's output is what the command printed), so a viewer is refused whatever its scope.
const PLAN = {
  containers: [{ name: 'web', image: 'local/busybox:1', environment: {}, labels: {}, volumes: [] }],
  volumes: [],
};
const releasedServiceOfA = async (f: Fixtures) => {
  const id = await f.freshService();
  await addDeployment(f.h, id, { plan: PLAN });
  return id;
};
const runOfA = async (f: Fixtures) =>
  (
    await f.h.container.db.serviceRun.create({
      data: {
        serviceId: f.serviceA,
        command: ['true'],
        timeoutSeconds: 60,
        status: 'succeeded',
        exitCode: 0,
      },
    })
  ).id;

export const RUN_ROUTES: Record<string, RouteEntry> = {
  'POST /api/services/:id/runs': one('run a command', writeA(202), async (f) => ({
    url: `/api/services/${await releasedServiceOfA(f)}/runs`,
    payload: { command: ['true'] },
  })),
  'GET /api/services/:id/runs': one('run history', writeA(200), (f) => ({
    url: `/api/services/${f.serviceA}/runs`,
  })),
  'GET /api/runs/:id': one('run with its output', writeA(200), async (f) => ({
    url: `/api/runs/${await runOfA(f)}`,
  })),
  // Scheduled jobs are runs at times: their routes join these.
  ...SCHEDULE_ROUTES,
};
