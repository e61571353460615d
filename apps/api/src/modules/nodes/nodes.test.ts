// The nodes API against the real database and Redis (docs/multi-host.md#nodes-api): what an
// operator sees of the worker's node snapshot, drain/activate recorded and handed to the worker as
// an ids-only job, and the service detail's placement. The worker side (observer, applying the
// request to a real swarm) is tested in apps/worker/src/nodes/.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUEUES } from '@hostctl/queue';
import { createHarness, json, type Harness } from '../../test-support/harness.js';
import { insertNode } from '../../test-support/nodes.js';

let h: Harness;
let docker: Harness;
let operator: string;
let scopedAdmin: string;
let serviceId: string;
let customerId: string;

beforeAll(async () => {
  [h, docker] = await Promise.all([createHarness({ RUNTIME: 'swarm' }), createHarness()]);
  customerId = (await h.customer()).id;
  operator = (await h.user('operator')).auth;
  scopedAdmin = (await h.user('admin', customerId)).auth;
  serviceId = (await h.createService(operator, { customer_id: customerId })).id;
});
afterAll(async () => Promise.all([h?.close(), docker?.close()]));

const call = (method: 'GET' | 'POST', url: string, auth: string, on = h) =>
  on.app.inject({ method, url, headers: { authorization: auth } });

describe('GET /api/nodes', () => {
  it("lists each node with its resources and this installation's tasks only", async () => {
    const node = await insertNode(h.container.db, {
      instance: h.config.QUEUE_PREFIX,
      serviceIds: [serviceId],
    });
    // Another installation sharing the swarm and the database: its tasks are not ours to show.
    await h.container.db.nodeTask.create({
      data: {
        id: `foreign${randomUUID().slice(0, 8)}`,
        nodeId: node.id,
        instance: 'another-installation',
        serviceId: randomUUID(),
        state: 'running',
        desiredState: 'running',
        message: '',
        updatedAt: new Date(),
      },
    });
    const response = await call('GET', '/api/nodes', operator);
    expect(response.statusCode).toBe(200);
    const listed = json<{ data: { id: string }[] }>(response).data.find((n) => n.id === node.id);
    expect(listed).toEqual({
      id: node.id,
      engine_id: node.engineId,
      hostname: node.hostname,
      role: 'worker',
      state: 'ready',
      availability: 'active',
      requested_availability: null,
      availability_error: null,
      address: '10.213.0.2',
      engine_version: '20.10.24',
      labels: { zone: 'a' },
      resources: { cpus: 2, memory_mb: 4096 },
      tasks: [
        {
          id: node.tasks[0]!.id,
          service_id: serviceId,
          component: 'web',
          slot: 1,
          state: 'running',
          desired_state: 'running',
          message: 'started',
        },
      ],
      observed_at: node.observedAt.toISOString(),
    });
  });

  it('refuses customer-scoped callers, even admins, naming why', async () => {
    const response = await call('GET', '/api/nodes', scopedAdmin);
    expect(response.statusCode).toBe(403);
    expect(json(response).detail).toMatch(/shared by every customer/);
  });
});

describe('drain and activate', () => {
  const queuedFor = async (nodeId: string) => {
    const jobs = await h.container.producer.queue(QUEUES.operations).getJobs(['wait', 'delayed']);
    return jobs.filter(
      (job) => job.name === 'node-availability' && (job.data as { nodeId?: string }).nodeId === nodeId,
    );
  };

  it('records the request and hands the worker a job that carries the node id only', async () => {
    const node = await insertNode(h.container.db, { instance: h.config.QUEUE_PREFIX });
    const drained = await call('POST', `/api/nodes/${node.id}/drain`, operator);
    expect(drained.statusCode).toBe(202);
    expect(json(drained)).toMatchObject({ availability: 'active', requested_availability: 'drain' });
    const jobs = await queuedFor(node.id);
    expect(jobs.map((job) => job.data as unknown)).toEqual([{ nodeId: node.id }]);

    // The latest request wins, and a failure recorded for an earlier one is forgotten.
    await h.container.db.node.update({ where: { id: node.id }, data: { availabilityError: 'old' } });
    const activated = await call('POST', `/api/nodes/${node.id}/activate`, operator);
    expect(json(activated)).toMatchObject({ requested_availability: 'active', availability_error: null });
    expect(await queuedFor(node.id)).toHaveLength(2);
  });

  it('answers 404 for an unknown node and 400 for an id that is no node id, enqueuing nothing', async () => {
    const unknown = randomUUID();
    const missing = await call('POST', `/api/nodes/${unknown}/drain`, operator);
    expect(missing.statusCode).toBe(404);
    expect(json(missing).detail).toContain(unknown);
    expect(await queuedFor(unknown)).toEqual([]);
    const malformed = await call('POST', '/api/nodes/..%2F..%2Fswarm/drain', operator);
    expect(malformed.statusCode).toBe(400);
  });

  it('a customer-scoped admin cannot drain a node', async () => {
    const node = await insertNode(h.container.db, { instance: h.config.QUEUE_PREFIX });
    expect((await call('POST', `/api/nodes/${node.id}/drain`, scopedAdmin)).statusCode).toBe(403);
    const stored = await h.container.db.node.findUniqueOrThrow({ where: { id: node.id } });
    expect(stored.requestedAvailability).toBeNull();
  });
});

describe('service placement', () => {
  it('RUNTIME=swarm: the service detail lists its running tasks and their nodes, no one else', async () => {
    const other = (await h.createService(operator, { customer_id: customerId })).id;
    const first = await insertNode(h.container.db, {
      instance: h.config.QUEUE_PREFIX,
      serviceIds: [serviceId],
    });
    const second = await insertNode(h.container.db, {
      instance: h.config.QUEUE_PREFIX,
      serviceIds: [other, serviceId],
    });
    // A task Swarm shut down (an old release) is history, not placement.
    const history = second.tasks.find((task) => task.serviceId === other)!;
    await h.container.db.nodeTask.update({
      where: { id: history.id },
      data: { serviceId, state: 'shutdown', desiredState: 'shutdown' },
    });
    const detail = json<{ placement: { hostname: string; task_id: string; node_id: string }[] }>(
      await call('GET', `/api/services/${serviceId}`, scopedAdmin),
    );
    const hosts = detail.placement.map((task) => task.hostname);
    expect(hosts).toContain(first.hostname);
    expect(hosts).toContain(second.hostname);
    expect(detail.placement.map((task) => task.task_id)).not.toContain(history.id);
    expect(detail.placement.find((task) => task.node_id === first.id)).toEqual({
      task_id: first.tasks[0]!.id,
      node_id: first.id,
      hostname: first.hostname,
      component: 'web',
      slot: 1,
      state: 'running',
      desired_state: 'running',
      message: 'started',
    });
  });

  it('RUNTIME=docker: the detail has no placement field', async () => {
    const admin = (await docker.user('admin')).auth;
    const created = await docker.createService(admin);
    const detail = json(await call('GET', `/api/services/${created.id}`, admin, docker));
    expect(detail).not.toHaveProperty('placement');
  });
});
