import { addDeployment } from '../test-support/releases.js';
import type { Fixtures } from './authz-fixtures.js';
import { all, writeA, type RouteEntry, type SocketCase } from './route-expectations.js';

// The terminal (docs/jobs.md#terminal): `services:operate`, and an API key only with the `exec`
// action by name. The table's callers hold keys without limits, so every one of them is refused
// (403) whatever its role; through a browser session the role and the scope decide, and a plain
// GET that passes every check is answered 200 (a preflight: what the terminal would open).
const PLAN = {
  containers: [{ name: 'web', image: 'local/busybox:1', environment: {}, labels: {}, volumes: [] }],
  volumes: [],
};
const releasedServiceOfA = async (f: Fixtures) => {
  const id = await f.freshService();
  await addDeployment(f.h, id, { plan: PLAN });
  return id;
};

export const EXEC_ROUTES: Record<string, RouteEntry> = {
  'GET /api/services/:id/exec': {
    cases: [
      {
        label: 'terminal with a key that does not name exec',
        request: async (f) => ({ url: `/api/services/${await releasedServiceOfA(f)}/exec` }),
        expect: all(403),
      },
      {
        label: 'terminal preflight through a session (no upgrade)',
        request: async (f) => ({ url: `/api/services/${await releasedServiceOfA(f)}/exec`, session: true }),
        expect: writeA(200),
      },
    ],
  },
};

export const EXEC_SOCKET_ROUTES: Record<string, SocketCase> = {
  'GET /api/services/:id/exec (upgrade)': {
    url: async (f) => `/api/services/${await releasedServiceOfA(f)}/exec`,
    expect: all(403),
  },
};
