import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, json, type Harness } from '../../test-support/harness.js';
import { addDeployment, settleFirst } from '../../test-support/releases.js';

/**
 * Cancel and rollback of one service at the same moment, as two CI jobs or a person and a job
 * would send them. Cancel locks the deployment then the service; rollback locks the service then
 * supersedes the queued deployment: whatever order the two take, each answer is a clear 200 or
 * 409 (never a 500 from a deadlock) and the rows agree with each other afterwards.
 */
let h: Harness;
let operator: { auth: string };
let customerId: string;

beforeAll(async () => {
  h = await createHarness();
  customerId = (await h.customer()).id;
  operator = await h.user('operator', customerId);
});
afterAll(async () => h.close());

/** A running service with two releases and a redeploy waiting in the queue. */
async function serviceWithQueuedRedeploy() {
  const { id, deploy_job_id } = await h.createService(operator.auth, { customer_id: customerId });
  await settleFirst(h, id, deploy_job_id, { at: 0 });
  await addDeployment(h, id, { at: 60 });
  const queued = await addDeployment(h, id, { at: 120, status: 'queued' });
  await h.container.db.service.update({ where: { id }, data: { status: 'deploying' } });
  return { serviceId: id, queued };
}

const post = (url: string) =>
  h.app.inject({ method: 'POST', url, headers: { authorization: operator.auth } });

describe('cancel of a queued deployment racing a rollback of its service', () => {
  it('answers 200 or 409, never 500, and leaves consistent rows', async () => {
    for (let round = 0; round < 8; round++) {
      const { serviceId, queued } = await serviceWithQueuedRedeploy();
      const [cancel, rollback] = await Promise.all([
        post(`/api/deployments/${queued}/cancel`),
        post(`/api/services/${serviceId}/rollback`),
      ]);
      expect([cancel.statusCode, cancel.body]).toEqual([expect.toBeOneOf([200, 409]), expect.any(String)]);
      expect([rollback.statusCode, rollback.body]).toEqual([200, expect.any(String)]);
      const queuedRow = await h.container.db.deployment.findUniqueOrThrow({ where: { id: queued } });
      // Cancelled by the cancel, or superseded by the rollback: one of the two won, visibly.
      expect(queuedRow.status).toBe(cancel.statusCode === 200 ? 'cancelled' : 'superseded');
      const rollbackRow = await h.container.db.deployment.findUniqueOrThrow({
        where: { id: json<{ deploy_job_id: string }>(rollback).deploy_job_id },
      });
      expect(rollbackRow.status).toBe('queued');
      // A deployment waits in the queue, so the service says so.
      const service = await h.container.db.service.findUniqueOrThrow({ where: { id: serviceId } });
      expect(service.status).toBe('deploying');
    }
  });

  it('a cancel of a queued rollback racing a redeploy: 200 or 409 each, and one deployment queued', async () => {
    for (let round = 0; round < 8; round++) {
      const { serviceId } = await serviceWithQueuedRedeploy();
      const rolledBack = await post(`/api/services/${serviceId}/rollback`);
      const rollbackId = json<{ deploy_job_id: string }>(rolledBack).deploy_job_id;
      const [cancel, redeploy] = await Promise.all([
        post(`/api/deployments/${rollbackId}/cancel`),
        post(`/api/services/${serviceId}/redeploy`),
      ]);
      expect([cancel.statusCode, cancel.body]).toEqual([expect.toBeOneOf([200, 409]), expect.any(String)]);
      expect([redeploy.statusCode, redeploy.body]).toEqual([200, expect.any(String)]);
      const rollbackRow = await h.container.db.deployment.findUniqueOrThrow({ where: { id: rollbackId } });
      expect(rollbackRow.status).toBe(cancel.statusCode === 200 ? 'cancelled' : 'superseded');
      expect(await h.container.db.deployment.count({ where: { serviceId, status: 'queued' } })).toBe(1);
      const service = await h.container.db.service.findUniqueOrThrow({ where: { id: serviceId } });
      expect(service.status).toBe('deploying');
    }
  });
});
