// Issue 31, the build quotas (docs/quotas.md#builds). concurrent_builds: a customer's build past
// its quota waits (its job steps aside to the delayed set, as a deployment past
// DEPLOY_CUSTOMER_CONCURRENCY does) and never fails, while another customer's build runs.
// build_minutes_per_day: the worker asks again before building, so a deployment that waited while
// the minutes were used up fails naming the quota.
import { afterAll, describe, expect, it } from 'vitest';
import { createWorkerDeploymentStore } from '@hostctl/db';
import { noopRouter } from './adapters/router.js';
import { createFakeRuntime } from './testing/fake-runtime.js';
import { waitForDeployment } from './testing/fixtures.js';
import { createRepositoryService } from './testing/repository-fixtures.js';
import { TEST_IMAGE } from './testing/test-env.js';
import { useWorkerApp } from './testing/worker-fixture.js';

const fixture = useWorkerApp('buildq', {
  runtime: createFakeRuntime({ images: [TEST_IMAGE] }),
  app: { router: noopRouter, observe: false, readiness: { timeoutMs: 5000, stableMs: 50 } },
  // The deploy share is out of the way: only concurrent_builds holds builds back here.
  env: { WORKER_CONCURRENCY: '2', DEPLOY_CUSTOMER_CONCURRENCY: '10' },
});
const { db } = fixture;
// No clone ever starts: git:// to a host outside GIT_ALLOWED_HOSTS is refused at once. A build
// that got past the quotas fails on that, which is how the test sees it ran.
const URL = 'git://198.51.100.7/app.git';
const REFUSED_URL = /repository URL refused/;
const extraCustomers: string[] = [];
const owners: string[] = [];
afterAll(async () => {
  await db.service.deleteMany({ where: { customerId: { in: owners } } });
  await db.customer.deleteMany({ where: { id: { in: [...extraCustomers, ...owners] } } });
});

/** A git service of a customer of its own with a queued build, tracked for clean-up. */
async function customerWithBuild(overrides: Record<string, number | null> = {}) {
  const created = fixture.track(await createRepositoryService(db, { method: 'git', url: URL }));
  await db.customer.update({ where: { id: created.customerId }, data: { quotaOverrides: overrides } });
  return created;
}

/** Another git service with a queued build, moved to `customerId`. */
async function buildOf(customerId: string) {
  if (!owners.includes(customerId)) owners.push(customerId);
  const created = fixture.track(await createRepositoryService(db, { method: 'git', url: URL }));
  extraCustomers.push(created.customerId);
  await db.service.update({ where: { id: created.serviceId }, data: { customerId } });
  return created.deploymentId;
}

describe('concurrent_builds', () => {
  it("a customer's build past its quota waits while another customer's build runs", async () => {
    // Customer A (default plan: 2 builds at once) has two builds running and queues a third.
    const first = await customerWithBuild();
    const customerA = first.customerId;
    const second = await buildOf(customerA);
    for (const id of [first.deploymentId, second])
      await db.deployment.update({
        where: { id },
        data: { status: 'running', step: 'build', startedAt: new Date() },
      });
    const third = await buildOf(customerA);
    await fixture.app.producer.enqueue('deploy', { deploymentId: third });
    // Customer B's build is queued behind it.
    const b = await customerWithBuild();
    await fixture.app.producer.enqueue('deploy', { deploymentId: b.deploymentId });

    const ran = await waitForDeployment(db, b.deploymentId, 60_000);
    expect(ran).toMatchObject({ status: 'failed' });
    expect(ran.error).toMatch(REFUSED_URL);
    expect(ran.startedAt).not.toBeNull();
    // A's third waited: still queued, never claimed, not failed.
    expect(await db.deployment.findUniqueOrThrow({ where: { id: third } })).toMatchObject({
      status: 'queued',
      startedAt: null,
      error: null,
    });

    // One of A's builds ends (the deployment goes on to pull): the third takes its place.
    await db.deployment.update({ where: { id: second }, data: { step: 'pull' } });
    const waited = await waitForDeployment(db, third, 60_000);
    expect(waited.error).toMatch(REFUSED_URL);
    expect(waited.startedAt).not.toBeNull();
    await db.deployment.updateMany({
      where: { id: { in: [first.deploymentId, second] } },
      data: { status: 'cancelled' },
    });
  });

  it('claims of one customer raced together start exactly its concurrent_builds', async () => {
    const first = await customerWithBuild({ concurrent_builds: 3 });
    const ids = [first.deploymentId];
    for (let i = 0; i < 9; i++) ids.push(await buildOf(first.customerId));
    const store = createWorkerDeploymentStore(db);
    const results = await Promise.all(ids.map((id) => store.claim(id, 10)));
    expect(results.filter((r) => r === 'claimed')).toHaveLength(3);
    expect(results.filter((r) => r === 'customer_busy')).toHaveLength(7);
    await db.deployment.updateMany({ where: { id: { in: ids } }, data: { status: 'cancelled' } });
  });

  it('unlimited (null) holds no build back; a rollback builds nothing and is not held', async () => {
    const first = await customerWithBuild({ concurrent_builds: null });
    const ids = [first.deploymentId];
    for (let i = 0; i < 4; i++) ids.push(await buildOf(first.customerId));
    const store = createWorkerDeploymentStore(db);
    expect(await Promise.all(ids.map((id) => store.claim(id, 10)))).toEqual(ids.map(() => 'claimed'));

    const held = await customerWithBuild({ concurrent_builds: 0 });
    // The lock-free hint says so too, and the job steps aside before the service lock.
    expect(await store.isCustomerAtShare(held.deploymentId, 10)).toBe(true);
    expect(await store.claim(held.deploymentId, 10)).toBe('customer_busy');
    await db.deployment.update({ where: { id: held.deploymentId }, data: { trigger: 'rollback' } });
    expect(await store.isCustomerAtShare(held.deploymentId, 10)).toBe(false);
    expect(await store.claim(held.deploymentId, 10)).toBe('claimed');
    await db.deployment.updateMany({
      where: { id: { in: [...ids, held.deploymentId] } },
      data: { status: 'cancelled' },
    });
  });
});

describe('build_minutes_per_day in the worker', () => {
  it('a queued build of a customer whose minutes ran out meanwhile fails naming the quota', async () => {
    const earlier = await customerWithBuild({ build_minutes_per_day: 2 });
    const store = createWorkerDeploymentStore(db);
    // Two attempts of one deployment: their times add up (90 s → 2 minutes begun).
    await store.recordBuildTime(earlier.deploymentId, 45_000);
    await store.recordBuildTime(earlier.deploymentId, 45_000);
    await db.deployment.update({ where: { id: earlier.deploymentId }, data: { status: 'failed' } });
    expect(
      await db.deployment.findUniqueOrThrow({
        where: { id: earlier.deploymentId },
        select: { buildMs: true },
      }),
    ).toEqual({ buildMs: 90_000 });

    const queued = await buildOf(earlier.customerId);
    await fixture.app.producer.enqueue('deploy', { deploymentId: queued });
    const refused = await waitForDeployment(db, queued, 60_000);
    expect(refused.status).toBe('failed');
    expect(refused.error).toContain(
      'quota build_minutes_per_day exceeded: the customer uses 2 of 2 build minutes in the last 24 hours',
    );
  });
});
