import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, json, uniqueName, type Harness } from '../../test-support/harness.js';

// Replicas answering redeploys of one service at the same instant: the partial unique index lets
// one queued deployment exist, and every other request joins it, visibly, in the timeline.
let h: Harness;
let operator: { auth: string };
let customerId: string;

beforeAll(async () => {
  h = await createHarness();
  operator = await h.user('operator');
  customerId = (await h.customer()).id;
});
afterAll(async () => h.close());

describe('concurrent redeploys', () => {
  it('all succeed and share one queued deployment; the joiners say so in the timeline', async () => {
    const created = await h.createService(operator.auth, {
      name: uniqueName('race'),
      customer_id: customerId,
    });
    // Let the first deployment start, so the redeploys race to create the next one.
    await h.container.db.deployment.update({
      where: { id: created.deploy_job_id },
      data: { status: 'running' },
    });
    const replies = await Promise.all(
      Array.from({ length: 6 }, () =>
        h.app.inject({
          method: 'POST',
          url: `/api/services/${created.id}/redeploy`,
          headers: { authorization: operator.auth },
        }),
      ),
    );
    const codes = replies.map((reply) => reply.statusCode);
    expect(
      codes.every((code) => code >= 200 && code < 300),
      `status codes ${codes.join(', ')}`,
    ).toBe(true);
    const ids = new Set(replies.map((reply) => json<{ deploy_job_id: string }>(reply).deploy_job_id));
    expect(ids.size).toBe(1);
    expect(ids.has(created.deploy_job_id)).toBe(false);
    const events = await h.container.db.serviceEvent.findMany({
      where: { serviceId: created.id, type: 'redeploy' },
    });
    expect(events.filter((event) => event.status === 'started')).toHaveLength(1);
    expect(events.filter((event) => event.status === 'info').map((event) => event.message)).toEqual(
      Array(5).fill(`Redeploy requested; joined deployment ${[...ids][0]}, which is still queued`),
    );
  });
});
