import { randomUUID } from 'node:crypto';
import { addDeployment } from '../test-support/releases.js';
import type { Fixtures } from './authz-fixtures.js';
import { one, writeA, type RouteEntry } from './route-expectations.js';

// Schedules of customer A (docs/jobs.md#schedules): every route needs `services:operate`, reads
// included (as runs), so a viewer is refused whatever its scope; another scope finds nothing.
const PLAN = {
  containers: [{ name: 'web', image: 'local/busybox:1', environment: {}, labels: {}, volumes: [] }],
  volumes: [],
};
const jobName = () => `job-${randomUUID().slice(0, 8)}`;

/** A schedule of a service of A with a release (so run-now has something to run). */
const scheduleOfA = async (f: Fixtures) => {
  const serviceId = await f.freshService();
  await addDeployment(f.h, serviceId, { plan: PLAN });
  const schedule = await f.h.container.db.serviceSchedule.create({
    data: {
      serviceId,
      name: jobName(),
      cron: '0 3 * * *',
      timeZone: 'UTC',
      command: ['true'],
      timeoutSeconds: 60,
      nextRunAt: new Date(Date.now() + 3600_000),
    },
  });
  return schedule.id;
};

export const SCHEDULE_ROUTES: Record<string, RouteEntry> = {
  'GET /api/services/:id/schedules': one('schedules of a service', writeA(200), (f) => ({
    url: `/api/services/${f.serviceA}/schedules`,
  })),
  'POST /api/services/:id/schedules': one('schedule a job', writeA(201), (f) => ({
    url: `/api/services/${f.serviceA}/schedules`,
    payload: { name: jobName(), cron: '0 3 * * *', command: ['true'] },
  })),
  'GET /api/schedules/:id': one('schedule', writeA(200), async (f) => ({
    url: `/api/schedules/${await scheduleOfA(f)}`,
  })),
  'PATCH /api/schedules/:id': one('change a schedule', writeA(200), async (f) => ({
    url: `/api/schedules/${await scheduleOfA(f)}`,
    payload: { enabled: false },
  })),
  'DELETE /api/schedules/:id': one('delete a schedule', writeA(204), async (f) => ({
    url: `/api/schedules/${await scheduleOfA(f)}`,
  })),
  'POST /api/schedules/:id/run-now': one('run a schedule now', writeA(202), async (f) => ({
    url: `/api/schedules/${await scheduleOfA(f)}/run-now`,
  })),
  'GET /api/schedules/:id/runs': one('runs of a schedule', writeA(200), async (f) => ({
    url: `/api/schedules/${await scheduleOfA(f)}/runs`,
  })),
};
