// Issue 27, class 7: replicas count toward the per-customer cap (CUSTOMER_MAX_CONTAINERS) also when
// the API cannot count them: a git/ai plan is first known to the worker, and a redeploy or a
// rollback may run more containers than the definition the API saw. The deploy fails naming the
// limit before anything is pulled, and the service keeps its recorded count.
import { afterAll, describe, expect, it } from 'vitest';
import { noopRouter } from './adapters/router.js';
import { createFakeRuntime } from './testing/fake-runtime.js';
import { createRedeployment, waitForDeployment } from './testing/fixtures.js';
import { TEST_IMAGE } from './testing/test-env.js';
import { useWorkerApp } from './testing/worker-fixture.js';

const fixture = useWorkerApp('quota', {
  runtime: createFakeRuntime({ images: [TEST_IMAGE] }),
  app: { router: noopRouter, observe: false, readiness: { timeoutMs: 5000, stableMs: 200 } },
  env: { CUSTOMER_MAX_CONTAINERS: '4' },
});
const { db } = fixture;
const redeploy = async (serviceId: string) => {
  const deploymentId = await createRedeployment(db, serviceId);
  await fixture.app.producer.enqueue('deploy', { deploymentId });
  return deploymentId;
};
const siblings: string[] = [];
afterAll(async () => {
  await db.service.deleteMany({ where: { id: { in: siblings } } });
});

const withReplicas = (replicas: number) =>
  `services:\n  web:\n    image: ${TEST_IMAGE}\n    ports: ["8080"]\n    deploy: {replicas: ${replicas}}\n`;

describe('the worker counts a deployment against CUSTOMER_MAX_CONTAINERS', () => {
  it('refuses a redeploy whose plan no longer fits, and runs it once it does', async () => {
    const service = await fixture.deploy({ compose: withReplicas(1) });
    expect(await waitForDeployment(db, service.deploymentId, 30_000)).toMatchObject({ status: 'succeeded' });
    const sibling = await db.service.create({
      data: {
        name: `sibling-${service.serviceId.slice(0, 8)}`,
        customerId: service.customerId,
        status: 'running',
        deployMethod: 'compose',
        url: 'http://sibling.apps.localhost',
        containers: 3,
      },
    });
    siblings.push(sibling.id);

    // What a git repository's new head or a rollback does: the definition now asks for more.
    await db.service.update({ where: { id: service.serviceId }, data: { compose: withReplicas(2) } });
    const refused = await redeploy(service.serviceId);
    const failed = await waitForDeployment(db, refused, 30_000);
    expect(failed.status).toBe('failed');
    expect(failed.error).toContain(
      'this would bring the customer to 5 containers; at most 4 per customer (CUSTOMER_MAX_CONTAINERS), 3 are taken',
    );
    // The refused definition does not stay on the service: it reports what runs (class 3).
    expect(await db.service.findUniqueOrThrow({ where: { id: service.serviceId } })).toMatchObject({
      containers: 1,
      compose: withReplicas(1),
    });

    // Room is made and the larger definition asked for again: now it runs.
    await db.service.update({ where: { id: sibling.id }, data: { containers: 2 } });
    await db.service.update({ where: { id: service.serviceId }, data: { compose: withReplicas(2) } });
    const fits = await redeploy(service.serviceId);
    expect(await waitForDeployment(db, fits, 30_000)).toMatchObject({ status: 'succeeded' });
    expect((await db.service.findUniqueOrThrow({ where: { id: service.serviceId } })).containers).toBe(2);
  });
});
