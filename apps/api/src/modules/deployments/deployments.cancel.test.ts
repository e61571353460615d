import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeploymentStatus } from '@hostctl/domain';
import { createHarness, json, type Harness } from '../../test-support/harness.js';
import { addDeployment, settleFirst } from '../../test-support/releases.js';

// POST /api/deployments/:id/cancel. No worker runs: a claimed deployment is simulated by writing
// the row the way the worker's claim and setStep would.
let h: Harness;
let customerId: string;
let operator: { auth: string };

beforeAll(async () => {
  h = await createHarness();
  customerId = (await h.customer()).id;
  operator = await h.user('operator', customerId);
});
afterAll(async () => h.close());

const cancel = (id: string, auth = operator.auth) =>
  h.app.inject({ method: 'POST', url: `/api/deployments/${id}/cancel`, headers: { authorization: auth } });

const row = (id: string) => h.container.db.deployment.findUniqueOrThrow({ where: { id } });
const serviceStatus = async (id: string) =>
  (await h.container.db.service.findUniqueOrThrow({ where: { id } })).status;
const lastEvent = async (serviceId: string) =>
  h.container.db.serviceEvent.findFirst({ where: { serviceId }, orderBy: { id: 'desc' } });

/** A running service (one release) with a redeploy queued through the API. */
async function releasedWithQueuedRedeploy() {
  const { id, deploy_job_id } = await h.createService(operator.auth, { customer_id: customerId });
  await settleFirst(h, id, deploy_job_id, { at: 0 });
  const redeploy = await h.app.inject({
    method: 'POST',
    url: `/api/services/${id}/redeploy`,
    headers: { authorization: operator.auth },
  });
  return { serviceId: id, releaseId: deploy_job_id, queuedId: json(redeploy).deploy_job_id as string };
}

describe('cancel a queued deployment (no worker claimed it)', () => {
  it('ends it cancelled and gives a service without a release the status failed', async () => {
    const { id: serviceId, deploy_job_id } = await h.createService(operator.auth, {
      customer_id: customerId,
    });
    const response = await cancel(deploy_job_id);
    expect(response.statusCode).toBe(200);
    expect(json(response)).toMatchObject({
      id: deploy_job_id,
      service_id: serviceId,
      trigger: 'create',
      status: 'cancelled',
      error: 'cancelled by request',
      finished_at: expect.any(String),
      logs: [],
      last_seq: 0,
    });
    expect(await serviceStatus(serviceId)).toBe('failed');
    expect(await lastEvent(serviceId)).toMatchObject({ type: 'deploy', status: 'cancelled' });
  });

  it('gives a service whose release still serves the status running again', async () => {
    const { serviceId, queuedId } = await releasedWithQueuedRedeploy();
    expect(await serviceStatus(serviceId)).toBe('deploying');
    expect((await cancel(queuedId)).statusCode).toBe(200);
    expect(await serviceStatus(serviceId)).toBe('running');
    expect(await lastEvent(serviceId)).toMatchObject({ type: 'redeploy', status: 'cancelled' });
  });

  it('leaves the service status to a deployment still in flight', async () => {
    const { serviceId, queuedId } = await releasedWithQueuedRedeploy();
    await addDeployment(h, serviceId, { at: 30, status: 'running', step: 'pull' });
    expect((await cancel(queuedId)).statusCode).toBe(200);
    expect(await serviceStatus(serviceId)).toBe('deploying');
  });

  it('answers a follower waiting for the outcome', async () => {
    const { queuedId } = await releasedWithQueuedRedeploy();
    const waiting = h.app.inject({
      url: `/api/deployments/${queuedId}?wait=300`, // past the test timeout: only a final status answers
      headers: { authorization: operator.auth },
    });
    expect((await cancel(queuedId)).statusCode).toBe(200);
    expect(json(await waiting)).toMatchObject({ status: 'cancelled', error: 'cancelled by request' });
  });
});

describe('cancel a running deployment', () => {
  it('ends it cancelled and leaves the service status to the worker, which restores the release', async () => {
    const { serviceId, queuedId } = await releasedWithQueuedRedeploy();
    await h.container.db.deployment.update({
      where: { id: queuedId },
      data: { status: 'running', step: 'stabilize', startedAt: new Date() },
    });
    const response = await cancel(queuedId);
    expect(response.statusCode).toBe(200);
    expect(json(response)).toMatchObject({ status: 'cancelled', step: 'stabilize' });
    expect(await serviceStatus(serviceId)).toBe('deploying');
    expect(await lastEvent(serviceId)).toMatchObject({ type: 'redeploy', status: 'cancelled' });
  });

  it('a rollback is cancelled under its own event type', async () => {
    const { serviceId } = await releasedWithQueuedRedeploy();
    const rollback = await addDeployment(h, serviceId, {
      at: 90,
      trigger: 'rollback',
      status: 'running',
      step: 'pull',
    });
    expect((await cancel(rollback)).statusCode).toBe(200);
    expect(await lastEvent(serviceId)).toMatchObject({ type: 'rollback', status: 'cancelled' });
  });

  it('is 409 once it retires the previous release, and the row is left as it was', async () => {
    const { serviceId, queuedId } = await releasedWithQueuedRedeploy();
    await h.container.db.deployment.update({
      where: { id: queuedId },
      data: { status: 'running', step: 'retire', startedAt: new Date() },
    });
    const response = await cancel(queuedId);
    expect(response.statusCode).toBe(409);
    expect(json(response)).toMatchObject({
      code: 'conflict',
      detail: expect.stringContaining('replacing the previous release (step retire)'),
    });
    expect(await row(queuedId)).toMatchObject({ status: 'running', step: 'retire', finishedAt: null });
    expect(await lastEvent(serviceId)).not.toMatchObject({ status: 'cancelled' });
  });

  it('exactly one of many concurrent cancels wins', async () => {
    const { serviceId, queuedId } = await releasedWithQueuedRedeploy();
    const statuses = await Promise.all(
      Array.from({ length: 6 }, async () => (await cancel(queuedId)).statusCode),
    );
    expect(statuses.sort()).toEqual([200, 409, 409, 409, 409, 409]);
    expect(await h.container.db.serviceEvent.count({ where: { serviceId, status: 'cancelled' } })).toBe(1);
  });
});

describe('cancel a final deployment', () => {
  it.each<DeploymentStatus>(['succeeded', 'failed', 'rolled_back', 'superseded', 'cancelled'])(
    '%s → 409 naming the status',
    async (status) => {
      const { serviceId } = await releasedWithQueuedRedeploy();
      const id = await addDeployment(h, serviceId, { at: -60, status });
      const before = await row(id);
      const response = await cancel(id);
      expect(response.statusCode).toBe(409);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(json(response).detail).toBe(
        `deployment ${id} is already ${status}; only a queued or running deployment can be cancelled`,
      );
      expect(await row(id)).toEqual(before);
    },
  );

  it('a second cancel is 409', async () => {
    const { queuedId } = await releasedWithQueuedRedeploy();
    expect((await cancel(queuedId)).statusCode).toBe(200);
    expect(json(await cancel(queuedId)).detail).toContain('is already cancelled');
  });
});

describe('who may cancel', () => {
  it('a viewer of the customer gets 403 and nothing changes', async () => {
    const { queuedId } = await releasedWithQueuedRedeploy();
    const viewer = await h.user('viewer', customerId);
    expect((await cancel(queuedId, viewer.auth)).statusCode).toBe(403);
    expect((await row(queuedId)).status).toBe('queued');
  });

  it("an admin of another customer gets 404 for this customer's deployment", async () => {
    const { queuedId } = await releasedWithQueuedRedeploy();
    const outsider = await h.user('admin', (await h.customer()).id);
    expect((await cancel(queuedId, outsider.auth)).statusCode).toBe(404);
    expect((await row(queuedId)).status).toBe('queued');
  });

  it('an unknown id is 404 and a malformed one 400', async () => {
    expect((await cancel('00000000-0000-4000-8000-000000000000')).statusCode).toBe(404);
    const malformed = await cancel('not%20an%20id');
    expect(malformed.statusCode).toBe(400);
    expect(json<{ errors: { path: string }[] }>(malformed).errors[0]?.path).toBe('/params/id');
  });
});
