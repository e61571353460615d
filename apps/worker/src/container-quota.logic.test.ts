// Issue 27, class 7 and issue 31: replicas and their limits count toward the customer's quotas
// (docs/quotas.md) also when the API cannot count them: a git/ai plan is first known to the worker,
// and a redeploy or a rollback may run more containers than the definition the API saw. The deploy
// fails naming the quota before anything is pulled, and the service keeps its recorded claim.
import { afterAll, describe, expect, it } from 'vitest';
import { noopRouter } from './adapters/router.js';
import { createFakeRuntime } from './testing/fake-runtime.js';
import { createRedeployment, waitForDeployment } from './testing/fixtures.js';
import { TEST_IMAGE } from './testing/test-env.js';
import { useWorkerApp } from './testing/worker-fixture.js';

const fixture = useWorkerApp('quota', {
  runtime: createFakeRuntime({ images: [TEST_IMAGE] }),
  app: { router: noopRouter, observe: false, readiness: { timeoutMs: 5000, stableMs: 200 } },
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

const setOverrides = (customerId: string, overrides: object) =>
  db.customer.update({ where: { id: customerId }, data: { quotaOverrides: overrides } });

describe("the worker counts a deployment against the customer's quotas", () => {
  it('refuses a redeploy whose plan no longer fits, and runs it once it does', async () => {
    const service = await fixture.deploy({ compose: withReplicas(1) });
    await setOverrides(service.customerId, { containers: 4 });
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
      'quota containers exceeded: the customer uses 4 of 4 containers (replicas summed over live services) and the request asks for 1 more',
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

  it('records memory and CPU with replicas, refuses their growth, and redeploys the same plan under a lowered quota', async () => {
    const service = await fixture.deploy({ compose: withReplicas(2) });
    expect(await waitForDeployment(db, service.deploymentId, 30_000)).toMatchObject({ status: 'succeeded' });
    // Two replicas of the default limits (512 MiB, 1 CPU each).
    expect(await db.service.findUniqueOrThrow({ where: { id: service.serviceId } })).toMatchObject({
      containers: 2,
      claimedMemoryMb: 1024,
      claimedMillicpus: 2000,
    });

    // The admin lowers the quotas below what runs: the same plan still deploys.
    await setOverrides(service.customerId, { memory_mb: 512, cpus: 1 });
    const same = await redeploy(service.serviceId);
    expect(await waitForDeployment(db, same, 30_000)).toMatchObject({ status: 'succeeded' });

    // Growth is refused, naming the quota, and the claim stays as it was.
    await db.service.update({ where: { id: service.serviceId }, data: { compose: withReplicas(3) } });
    const grown = await waitForDeployment(db, await redeploy(service.serviceId), 30_000);
    expect(grown.status).toBe('failed');
    expect(grown.error).toContain('quota memory_mb exceeded: the customer uses 1024 of 512');
    expect((await db.service.findUniqueOrThrow({ where: { id: service.serviceId } })).claimedMemoryMb).toBe(
      1024,
    );
  });
});
