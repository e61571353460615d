import { randomUUID } from 'node:crypto';
import { createAdvisoryLocks } from '@hostctl/db';
import { afterAll, describe, expect, it } from 'vitest';
import { TEST_DATABASE_URL } from '../testing/test-env.js';

// Two "replicas" = two lock clients with their own pools, like two worker processes.
const replicaA = createAdvisoryLocks({ url: TEST_DATABASE_URL, max: 2 });
const replicaB = createAdvisoryLocks({ url: TEST_DATABASE_URL, max: 2 });

afterAll(async () => {
  await replicaA.close();
  await replicaB.close();
});

describe('per-service advisory lock', () => {
  it('lets one holder in at a time across processes and frees the key on release', async () => {
    const serviceId = randomUUID();
    const lease = await replicaA.tryAcquire(serviceId);
    expect(lease?.isHeld).toBe(true);
    expect(await replicaB.tryAcquire(serviceId)).toBeNull();
    // A different service is not blocked.
    const other = await replicaB.tryAcquire(randomUUID());
    expect(other).not.toBeNull();
    await other?.release();

    const waiting = replicaB.acquire(serviceId, 5000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await lease?.release();
    const second = await waiting;
    expect(second?.isHeld).toBe(true);
    await second?.release();
  });

  it('gives up after the wait bound', async () => {
    const serviceId = randomUUID();
    const lease = await replicaA.tryAcquire(serviceId);
    const started = Date.now();
    expect(await replicaB.acquire(serviceId, 400)).toBeNull();
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
    await lease?.release();
  });
});
