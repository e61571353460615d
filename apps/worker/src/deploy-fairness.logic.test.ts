// Issue 31, fair queues (docs/quotas.md#fair-queues): a customer runs at most
// DEPLOY_CUSTOMER_CONCURRENCY deployments at once across every worker; a job past its share steps
// back in the queue, so that another customer's deployment, queued behind a flood, takes the slot.
import { afterAll, describe, expect, it } from 'vitest';
import { createWorkerDeploymentStore } from '@hostctl/db';
import { noopRouter } from './adapters/router.js';
import { createFakeRuntime } from './testing/fake-runtime.js';
import { createComposeService, waitForDeployment } from './testing/fixtures.js';
import { TEST_IMAGE } from './testing/test-env.js';
import { useWorkerApp } from './testing/worker-fixture.js';

const fixture = useWorkerApp('fair', {
  runtime: createFakeRuntime({ images: [TEST_IMAGE] }),
  app: { router: noopRouter, observe: false, readiness: { timeoutMs: 5000, stableMs: 50 } },
  env: { WORKER_CONCURRENCY: '2', DEPLOY_CUSTOMER_CONCURRENCY: '1' },
});
const { db } = fixture;
const COMPOSE = `services:\n  web:\n    image: ${TEST_IMAGE}\n    ports: ["8080"]\n`;
const A_QUEUED = 6;
const extraCustomers: string[] = [];
const owners: string[] = [];
// Runs before the fixture's cleanup, which deletes each service's customer in turn: an owner of
// several services must lose them all first.
afterAll(async () => {
  await db.service.deleteMany({ where: { customerId: { in: owners } } });
  await db.customer.deleteMany({ where: { id: { in: [...extraCustomers, ...owners] } } });
});

/** A service with a queued deployment, moved to `customerId` (the fixture makes a customer per service). */
async function queuedFor(customerId: string) {
  if (!owners.includes(customerId)) owners.push(customerId);
  const service = fixture.track(await createComposeService(db, { compose: COMPOSE }));
  extraCustomers.push(service.customerId);
  await db.service.update({ where: { id: service.serviceId }, data: { customerId } });
  return service.deploymentId;
}

describe('per-customer deploy concurrency', () => {
  it("one customer's flood waits behind its share; another customer's deployment runs meanwhile", async () => {
    // Customer A holds its one slot with a long deployment (a build, say) and queues six more.
    const held = fixture.track(await createComposeService(db, { compose: COMPOSE }));
    const customerA = held.customerId;
    await db.deployment.update({
      where: { id: held.deploymentId },
      data: { status: 'running', startedAt: new Date() },
    });
    const flood: string[] = [];
    for (let i = 0; i < A_QUEUED; i++) flood.push(await queuedFor(customerA));
    for (const deploymentId of flood) await fixture.app.producer.enqueue('deploy', { deploymentId });
    // Customer B's single deployment is queued behind all of them.
    const single = fixture.track(await createComposeService(db, { compose: COMPOSE }));
    await fixture.app.producer.enqueue('deploy', { deploymentId: single.deploymentId });

    expect(await waitForDeployment(db, single.deploymentId, 60_000)).toMatchObject({ status: 'succeeded' });
    const waiting = await db.deployment.findMany({
      where: { id: { in: flood } },
      select: { status: true, startedAt: true },
    });
    expect(waiting.map((d) => [d.status, d.startedAt])).toEqual(flood.map(() => ['queued', null]));

    // A's slot frees up: its flood then runs, one deployment at a time.
    await db.deployment.update({
      where: { id: held.deploymentId },
      data: { status: 'succeeded', finishedAt: new Date() },
    });
    for (const deploymentId of flood)
      expect(await waitForDeployment(db, deploymentId, 90_000)).toMatchObject({ status: 'succeeded' });
    const runs = await db.deployment.findMany({
      where: { id: { in: flood } },
      select: { startedAt: true, finishedAt: true },
      orderBy: { startedAt: 'asc' },
    });
    for (let i = 1; i < runs.length; i++)
      expect(runs[i]!.startedAt!.getTime()).toBeGreaterThanOrEqual(runs[i - 1]!.finishedAt!.getTime());
  });

  it("the step-aside hint counts only the running deployments of the job's customer", async () => {
    const held = fixture.track(await createComposeService(db, { compose: COMPOSE }));
    await db.deployment.update({ where: { id: held.deploymentId }, data: { status: 'running' } });
    const queuedA = await queuedFor(held.customerId);
    await queuedFor(held.customerId);
    const otherCustomer = fixture.track(await createComposeService(db, { compose: COMPOSE }));
    const store = createWorkerDeploymentStore(db);

    // A runs one and has two queued: queued ones take no slot.
    expect(await store.isCustomerAtShare(queuedA, 1)).toBe(true);
    expect(await store.isCustomerAtShare(queuedA, 2)).toBe(false);
    // A's running deployment is not another customer's.
    expect(await store.isCustomerAtShare(otherCustomer.deploymentId, 1)).toBe(false);
    await db.deployment.update({ where: { id: held.deploymentId }, data: { status: 'succeeded' } });
    expect(await store.isCustomerAtShare(queuedA, 1)).toBe(false);
    await db.deployment.updateMany({
      where: {
        status: 'queued',
        service: { customerId: { in: [held.customerId, otherCustomer.customerId] } },
      },
      data: { status: 'cancelled' },
    });
  });

  it('claims of one customer raced together pass its share exactly', async () => {
    const first = fixture.track(await createComposeService(db, { compose: COMPOSE }));
    const ids = [first.deploymentId];
    for (let i = 0; i < 9; i++) ids.push(await queuedFor(first.customerId));
    const store = createWorkerDeploymentStore(db);
    const results = await Promise.all(ids.map((id) => store.claim(id, 3)));
    expect(results.filter((r) => r === 'claimed')).toHaveLength(3);
    expect(results.filter((r) => r === 'customer_busy')).toHaveLength(7);
    await db.deployment.updateMany({ where: { id: { in: ids } }, data: { status: 'cancelled' } });
  });
});
