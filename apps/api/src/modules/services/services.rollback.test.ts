import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, json, type Harness } from '../../test-support/harness.js';
import { addDeployment, settleFirst, type ReleaseRow } from '../../test-support/releases.js';

// POST /api/services/:id/rollback. No worker runs: releases are deployment rows as the worker
// leaves them, and the test checks what the API commits and enqueues for the worker.
let h: Harness;
let customerId: string;
let operator: { auth: string };

beforeAll(async () => {
  h = await createHarness();
  customerId = (await h.customer()).id;
  operator = await h.user('operator', customerId);
});
afterAll(async () => h.close());

const COMPOSE_V1 = 'services:\n  web:\n    image: local/busybox:1\n    ports:\n      - "8080"\n';

const rollback = (serviceId: string, payload?: object, headers: Record<string, string> = {}) =>
  h.app.inject({
    method: 'POST',
    url: `/api/services/${serviceId}/rollback`,
    headers: { authorization: operator.auth, ...headers },
    ...(payload !== undefined ? { payload } : {}),
  });

/**
 * A running service whose first deployment succeeded at t=0 with compose v1 and variables v1,
 * then the given deployments; returns the service and every deployment id, oldest first.
 */
async function serviceWith(...rows: ReleaseRow[]) {
  const { id, deploy_job_id } = await h.createService(operator.auth, { customer_id: customerId });
  await settleFirst(h, id, deploy_job_id, { at: 0, compose: COMPOSE_V1, variables: { LEVEL: 'v1' } });
  const ids = [deploy_job_id];
  for (const [i, row] of rows.entries()) ids.push(await addDeployment(h, id, { at: 60 * (i + 1), ...row }));
  await h.container.db.service.update({
    where: { id },
    data: { compose: 'services: {} # v2', variables: { LEVEL: 'v2' }, status: 'running' },
  });
  return { serviceId: id, ids };
}

const rowOf = (id: string) => h.container.db.deployment.findUniqueOrThrow({ where: { id } });
const serviceOf = (id: string) => h.container.db.service.findUniqueOrThrow({ where: { id } });

function expectConflict(response: Awaited<ReturnType<typeof rollback>>, detail: string) {
  expect(response.statusCode).toBe(409);
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(json(response)).toMatchObject({ code: 'conflict', status: 409, detail });
}

describe('rollback to the previous release (no body)', () => {
  it('queues a rollback deployment of the previous release and enqueues the deploy job', async () => {
    const { serviceId, ids } = await serviceWith({
      compose: 'services: {} # v2',
      variables: { LEVEL: 'v2' },
    });
    await h.container.db.deployment.update({ where: { id: ids[0] ?? '' }, data: { commit: 'c'.repeat(40) } });
    const response = await rollback(serviceId);
    expect(response.statusCode).toBe(200);
    const body = json(response);
    expect(body).toEqual({ id: serviceId, status: 'deploying', deploy_job_id: expect.any(String) });
    const id = body.deploy_job_id as string;

    expect(await rowOf(id)).toMatchObject({
      serviceId,
      trigger: 'rollback',
      status: 'queued',
      rollbackOf: ids[0],
      commit: 'c'.repeat(40),
    });
    const job = await h.container.producer.queue('deployments').getJob(`deploy.${id}`);
    expect(job?.data).toEqual({ deploymentId: id });
    // The definition goes back only when the rollback succeeds (the worker): a cancelled or
    // superseded rollback must leave the service's compose and variables as they were.
    const service = await serviceOf(serviceId);
    expect(service).toMatchObject({
      status: 'deploying',
      compose: 'services: {} # v2',
      variables: { LEVEL: 'v2' },
    });
    const event = await h.container.db.serviceEvent.findFirst({
      where: { serviceId },
      orderBy: { id: 'desc' },
    });
    expect(event).toMatchObject({ type: 'rollback', status: 'started' });
    expect(event?.message).toContain(ids[0]);

    const view = json(
      await h.app.inject({ url: `/api/deployments/${id}`, headers: { authorization: operator.auth } }),
    );
    expect(view).toMatchObject({ trigger: 'rollback', rollback_of: ids[0], status: 'queued' });
  });

  it('"previous" is the last success before the running release: failures and later ones are skipped', async () => {
    // t0 v1 ok, t60 failed, t120 ok (running release), t180 failed, t240 rolled_back
    const { serviceId, ids } = await serviceWith(
      { status: 'failed' },
      {},
      { status: 'failed' },
      { status: 'rolled_back' },
    );
    const id = json(await rollback(serviceId)).deploy_job_id as string;
    expect((await rowOf(id)).rollbackOf).toBe(ids[0]);
  });

  it('after a rollback ran, "previous" is the release before the rollback', async () => {
    const { serviceId, ids } = await serviceWith({});
    await addDeployment(h, serviceId, { at: 120, trigger: 'rollback' });
    const id = json(await rollback(serviceId)).deploy_job_id as string;
    expect((await rowOf(id)).rollbackOf).toBe(ids[1]);
  });

  it('409 when the running release is the only one', async () => {
    const { serviceId, ids } = await serviceWith({ status: 'failed' });
    expectConflict(
      await rollback(serviceId),
      `service ${serviceId} has no successful deployment before its running release ${ids[0]}; there is no previous release to roll back to`,
    );
  });

  it('409 when nothing ever succeeded', async () => {
    const { id: serviceId } = await h.createService(operator.auth, { customer_id: customerId });
    expectConflict(
      await rollback(serviceId),
      `service ${serviceId} has no successful deployment yet; there is no release to roll back to`,
    );
    expect(await h.container.db.deployment.count({ where: { serviceId } })).toBe(1);
  });
});

describe('rollback to a chosen deployment', () => {
  it('queues that release', async () => {
    const { serviceId, ids } = await serviceWith({}, {});
    const id = json(await rollback(serviceId, { deployment_id: ids[0] })).deploy_job_id as string;
    expect((await rowOf(id)).rollbackOf).toBe(ids[0]);
  });

  it('an empty object is the default target', async () => {
    const { serviceId, ids } = await serviceWith({});
    const id = json(await rollback(serviceId, {})).deploy_job_id as string;
    expect((await rowOf(id)).rollbackOf).toBe(ids[0]);
  });

  it("another service's deployment (same customer) and an unknown id are 404", async () => {
    const { serviceId } = await serviceWith({});
    const other = await serviceWith({});
    for (const target of [other.ids[0], randomUUID()]) {
      const response = await rollback(serviceId, { deployment_id: target });
      expect(response.statusCode).toBe(404);
      expect(json(response).detail).toBe(`deployment ${target} of service ${serviceId} not found`);
    }
    expect(await h.container.db.deployment.count({ where: { serviceId, trigger: 'rollback' } })).toBe(0);
  });

  it.each(['failed', 'rolled_back', 'cancelled', 'superseded', 'running', 'queued'] as const)(
    'a %s deployment → 409 naming its status',
    async (status) => {
      const { serviceId, ids } = await serviceWith({}, { status });
      expectConflict(
        await rollback(serviceId, { deployment_id: ids[2] }),
        `deployment ${ids[2]} is ${status}; only a succeeded deployment can be rolled back to`,
      );
    },
  );

  it('a release without a stored plan → 409', async () => {
    const { serviceId, ids } = await serviceWith({ plan: null }, {});
    expectConflict(
      await rollback(serviceId, { deployment_id: ids[1] }),
      `deployment ${ids[1]} has no stored plan to run again; choose another succeeded deployment`,
    );
  });

  it('the running release → 409', async () => {
    const { serviceId, ids } = await serviceWith({});
    expectConflict(
      await rollback(serviceId, { deployment_id: ids[1] }),
      `deployment ${ids[1]} is the running release of service ${serviceId}; nothing to roll back`,
    );
    expect((await serviceOf(serviceId)).compose).toBe('services: {} # v2');
  });
});

describe('rollback and the queue', () => {
  it('supersedes a redeploy still waiting in the queue, which says so', async () => {
    const { serviceId, ids } = await serviceWith({});
    const redeploy = await h.app.inject({
      method: 'POST',
      url: `/api/services/${serviceId}/redeploy`,
      headers: { authorization: operator.auth },
    });
    const queuedId = json(redeploy).deploy_job_id as string;
    const id = json(await rollback(serviceId)).deploy_job_id as string;
    expect(await rowOf(queuedId)).toMatchObject({ status: 'superseded', finishedAt: expect.any(Date) });
    const log = await h.container.db.deploymentLog.findFirst({ where: { deploymentId: queuedId } });
    expect(log?.message).toBe(`Deployment ${queuedId} superseded by the rollback ${id}; it was not run`);
    expect(await h.container.db.deployment.findMany({ where: { serviceId, status: 'queued' } })).toEqual([
      expect.objectContaining({ id, rollbackOf: ids[0] }),
    ]);
  });

  it('a redeploy requested while a rollback waits replaces it instead of joining it', async () => {
    const { serviceId } = await serviceWith({});
    const rollbackId = json(await rollback(serviceId)).deploy_job_id as string;
    const redeploy = await h.app.inject({
      method: 'POST',
      url: `/api/services/${serviceId}/redeploy`,
      headers: { authorization: operator.auth },
    });
    const redeployId = json(redeploy).deploy_job_id as string;
    expect(redeployId).not.toBe(rollbackId);
    expect((await rowOf(rollbackId)).status).toBe('superseded');
    expect(await rowOf(redeployId)).toMatchObject({ status: 'queued', trigger: 'redeploy' });
  });

  it('two concurrent rollbacks leave one queued rollback', async () => {
    const { serviceId } = await serviceWith({}, {});
    const responses = await Promise.all([rollback(serviceId), rollback(serviceId)]);
    expect(responses.map((r) => r.statusCode)).toEqual([200, 200]);
    expect(await h.container.db.deployment.count({ where: { serviceId, status: 'queued' } })).toBe(1);
  });
});

describe('Idempotency-Key', () => {
  it('replays the first answer for the same key and body and queues one rollback', async () => {
    const { serviceId } = await serviceWith({});
    const key = randomUUID();
    const first = await rollback(serviceId, {}, { 'idempotency-key': key });
    const second = await rollback(serviceId, {}, { 'idempotency-key': key });
    expect(second.statusCode).toBe(200);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(json(second)).toEqual(json(first));
    expect(await h.container.db.deployment.count({ where: { serviceId, trigger: 'rollback' } })).toBe(1);
  });

  it('the same key with another target is 422', async () => {
    const { serviceId, ids } = await serviceWith({}, {});
    const key = randomUUID();
    expect(
      (await rollback(serviceId, { deployment_id: ids[0] }, { 'idempotency-key': key })).statusCode,
    ).toBe(200);
    const reused = await rollback(serviceId, { deployment_id: ids[1] }, { 'idempotency-key': key });
    expect(reused.statusCode).toBe(422);
    expect(json(reused).code).toBe('idempotency_key_reused');
  });
});

describe('who may roll back, and what is a bad request', () => {
  it('a viewer gets 403 and an operator of another customer 404; nothing is queued', async () => {
    const { serviceId } = await serviceWith({});
    const viewer = await h.user('viewer', customerId);
    const outsider = await h.user('operator', (await h.customer()).id);
    expect((await rollback(serviceId, undefined, { authorization: viewer.auth })).statusCode).toBe(403);
    expect((await rollback(serviceId, undefined, { authorization: outsider.auth })).statusCode).toBe(404);
    expect(await h.container.db.deployment.count({ where: { serviceId, trigger: 'rollback' } })).toBe(0);
  });

  it.each([
    ['a number', { deployment_id: 7 }, '/body/deployment_id'],
    ['an id with spaces', { deployment_id: 'not an id' }, '/body/deployment_id'],
    ['an unknown field', { deployment: 'x' }, '/body/deployment'],
  ])('deployment_id as %s → 400 naming %s', async (_label, payload, path) => {
    const { serviceId } = await serviceWith({});
    const response = await rollback(serviceId, payload);
    expect(response.statusCode).toBe(400);
    expect(json<{ errors: { path: string }[] }>(response).errors.map((e) => e.path)).toContain(path);
  });

  it('a JSON array body → 400', async () => {
    const { serviceId } = await serviceWith({});
    const response = await h.app.inject({
      method: 'POST',
      url: `/api/services/${serviceId}/rollback`,
      headers: { authorization: operator.auth, 'content-type': 'application/json' },
      payload: '["x"]',
    });
    expect(response.statusCode).toBe(400);
  });
});
