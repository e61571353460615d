import { readA, type SocketCase } from './route-expectations.js';
import { RUN_SOCKET_ROUTES } from './run-routes.table.js';
import { EXEC_SOCKET_ROUTES } from './exec-routes.table.js';

/** WebSocket upgrades of the streaming routes (routes of route-table.ts, the `wsHandler` side). */
export const SOCKET_TABLE: Record<string, SocketCase> = {
  'GET /api/services/:id/logs?follow=true': {
    url: (f) => `/api/services/${f.serviceA}/logs?follow=true`,
    expect: readA(101),
  },
  'GET /api/deployments/:id (upgrade)': {
    url: (f) => `/api/deployments/${f.deploymentA}`,
    expect: readA(101),
  },
  ...RUN_SOCKET_ROUTES,
  ...EXEC_SOCKET_ROUTES,
};
