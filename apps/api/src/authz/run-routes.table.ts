import { addDeployment } from '../test-support/releases.js';
import type { Fixtures } from './authz-fixtures.js';
import { one, writeA, type RouteEntry, type SocketCase } from './route-expectations.js';
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

/** A run of customer A still going: its output stream stays open (no worker writes it here). */
const runningRunOfA = async (f: Fixtures) =>
  (
    await f.h.container.db.serviceRun.create({
      data: { serviceId: f.serviceA, command: ['sleep', '60'], timeoutSeconds: 60, status: 'running' },
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
  'GET /api/runs/:id/output': one('run output as printed', writeA(200), async (f) => ({
    url: `/api/runs/${await runOfA(f)}/output`,
  })),
  // Scheduled jobs are runs at times: their routes join these.
  ...SCHEDULE_ROUTES,
};

/** The WebSocket of a run's output: operators only, reads included (docs/jobs.md#who-may-run). */
export const RUN_SOCKET_ROUTES: Record<string, SocketCase> = {
  'GET /api/runs/:id/output?follow=true': {
    url: async (f) => `/api/runs/${await runningRunOfA(f)}/output?follow=true`,
    expect: writeA(101),
  },
};
