import { randomUUID } from 'node:crypto';
import { createAdvisoryLocks } from '@hostctl/db';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import type { Route, ServiceRouter } from '../adapters/router.js';
import type { ComponentObservation } from '../runtime/driver.js';
import { silentLogger } from '../testing/fixtures.js';
import { TEST_DATABASE_URL } from '../testing/test-env.js';
import { createUpdateRouteFollower } from './update-route-follower.js';

// What the follower every worker runs decides, with real advisory locks (a deploy job's lock is
// a PostgreSQL lock held by another replica) and a router that remembers its routes. That it
// keeps a real Swarm update answering through Caddy: swarm-release.e2e.test.ts.
const jobReplica = createAdvisoryLocks({ url: TEST_DATABASE_URL, max: 2 });
const followerReplica = createAdvisoryLocks({ url: TEST_DATABASE_URL, max: 2 });
afterAll(async () => {
  await jobReplica.close();
  await followerReplica.close();
});

const task = (port: number, state = 'running') => ({
  id: `t${port}`,
  node: 'node-1',
  state,
  desiredState: 'running' as const,
  ...(state === 'running' ? { endpoint: { host: '10.0.0.5', port } } : {}),
});
const web = (deploymentId: string, tasks: ReturnType<typeof task>[]): ComponentObservation => ({
  component: 'web',
  deploymentId,
  desiredReplicas: 1,
  runningReplicas: tasks.filter((item) => item.state === 'running').length,
  update: { state: 'updating' },
  tasks,
});

let routes: Map<string, Route>;
let upserts: Route[];
let replacing: string[];
let observed: Map<string, ComponentObservation[]>;
const router: ServiceRouter = {
  async upsert(route) {
    routes.set(route.serviceId, route);
    upserts.push(route);
  },
  async remove(serviceId) {
    routes.delete(serviceId);
  },
  async list() {
    return [...routes.values()].map((route) => ({
      serviceId: route.serviceId,
      upstream: route.targets
        .map((target) => `${target.host}:${target.port}`)
        .sort()
        .join(','),
    }));
  },
};
const follower = createUpdateRouteFollower({
  updates: { replacing: async () => replacing },
  serviceRuntime: { observe: async (serviceId) => observed.get(serviceId) ?? [] },
  router,
  services: {
    findById: async (id) =>
      ({
        id,
        name: `svc-${id.slice(0, 8)}`,
        url: `http://svc-${id.slice(0, 8)}.apps.test`,
        deletedAt: null,
      }) as never,
  },
  locks: followerReplica,
  intervalMs: 500,
  logger: silentLogger,
});

/** A service routed to its old task (port 30001) while Swarm runs the new one (30002) beside it. */
function updating(options: { routed?: boolean; tasks?: ReturnType<typeof task>[] } = {}) {
  const serviceId = randomUUID();
  replacing.push(serviceId);
  observed.set(serviceId, [web('new', options.tasks ?? [task(30001), task(30002)])]);
  if (options.routed !== false)
    routes.set(serviceId, {
      serviceId,
      serviceName: 'svc',
      url: 'http://svc.apps.test',
      targets: [{ host: '10.0.0.5', port: 30001 }],
    });
  return serviceId;
}

beforeEach(() => {
  routes = new Map();
  upserts = [];
  replacing = [];
  observed = new Map();
});

describe('the follower of Swarm updates no job follows', () => {
  it('routes a service Swarm is replacing to every running web task, old and new', async () => {
    const serviceId = updating();
    expect(await follower.runOnce()).toBe(1);
    expect(routes.get(serviceId)?.targets).toEqual([
      { host: '10.0.0.5', port: 30001 },
      { host: '10.0.0.5', port: 30002 },
    ]);
    expect(routes.get(serviceId)?.url).toBe(`http://svc-${serviceId.slice(0, 8)}.apps.test`);
    // Then the old task stops: the route follows, and a look that finds nothing new writes nothing.
    observed.set(serviceId, [web('new', [task(30001, 'shutdown'), task(30002)])]);
    expect(await follower.runOnce()).toBe(1);
    expect(routes.get(serviceId)?.targets).toEqual([{ host: '10.0.0.5', port: 30002 }]);
    expect(await follower.runOnce()).toBe(0);
    expect(upserts).toHaveLength(2);
  });

  it('leaves a service whose deploy job holds its lock to that job', async () => {
    const serviceId = updating();
    const lease = await jobReplica.tryAcquire(serviceId);
    expect(lease).not.toBeNull();
    try {
      expect(await follower.runOnce()).toBe(0);
      expect(upserts).toEqual([]);
    } finally {
      await lease?.release();
    }
    // The job's worker died: its lock went with its connection, and the follower takes over.
    expect(await follower.runOnce()).toBe(1);
  });

  it('leaves alone a service without a route, one without a running web task, and one Swarm is not replacing', async () => {
    updating({ routed: false });
    updating({ tasks: [task(30001, 'shutdown'), task(30002, 'starting')] });
    const settled = updating();
    replacing = replacing.filter((id) => id !== settled);
    expect(await follower.runOnce()).toBe(0);
    expect(upserts).toEqual([]);
  });

  it('frees the lock of each service it looked at', async () => {
    const serviceId = updating();
    await follower.runOnce();
    const lease = await jobReplica.tryAcquire(serviceId);
    expect(lease).not.toBeNull();
    await lease?.release();
  });
});
