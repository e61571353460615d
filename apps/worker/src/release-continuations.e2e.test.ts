import { describe, expect, it } from 'vitest';
import { createComposeService, createRedeployment, waitForDeployment } from './testing/fixtures.js';
import { useWorkerApp } from './testing/worker-fixture.js';

// Issue 29: a release waiting out its window holds no worker slot. One replica with one slot, a
// redeploy in an 8 s stabilisation window: another service's deploy runs to the end meanwhile
// instead of queueing behind the wait, and the waiting release still takes its full window.
const WINDOW_MS = 8000;
const { db, app, created } = useWorkerApp('pauses', {
  env: {
    WORKER_CONCURRENCY: '1',
    RELEASE_STABILIZATION_MS: String(WINDOW_MS),
    RELEASE_STABILIZATION_MIN_MS: String(WINDOW_MS),
    RELEASE_DRAIN_MS: '500',
    RELEASE_DRAIN_MIN_MS: '500',
  },
});
const WEB =
  'services:\n  web:\n    image: local/busybox:1\n    command: ["httpd", "-f", "-p", "8080", "-h", "/www"]\n    ports: ["8080"]\n';

async function waitForStep(deploymentId: string, step: string, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const row = await db.deployment.findUniqueOrThrow({ where: { id: deploymentId } });
    if (row.step === step) return row;
    if (Date.now() > deadline)
      throw new Error(`deployment ${deploymentId} never reached ${step} (at ${row.step})`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('a release in its window', () => {
  it('leaves the only worker slot to other deployments while it waits', async () => {
    const waiting = await createComposeService(db, { compose: WEB });
    created.push(waiting);
    await app.producer.enqueue('deploy', { deploymentId: waiting.deploymentId });
    expect((await waitForDeployment(db, waiting.deploymentId)).status).toBe('succeeded');

    const redeploy = await createRedeployment(db, waiting.serviceId);
    await app.producer.enqueue('deploy', { deploymentId: redeploy });
    const stabilising = await waitForStep(redeploy, 'stabilize');

    const other = await createComposeService(db, { compose: WEB });
    created.push(other);
    await app.producer.enqueue('deploy', { deploymentId: other.deploymentId });
    const otherDone = await waitForDeployment(db, other.deploymentId);
    expect(otherDone.status).toBe('succeeded');
    // The other deploy finished while the first release was still in its window.
    const windowEnds = stabilising.windowStartedAt!.getTime() + WINDOW_MS;
    expect(otherDone.finishedAt!.getTime()).toBeLessThan(windowEnds);
    const during = await db.deployment.findUniqueOrThrow({ where: { id: redeploy } });
    expect(during).toMatchObject({ status: 'running', step: 'stabilize' });

    expect((await waitForDeployment(db, redeploy)).status).toBe('succeeded');
    const log = (
      await db.deploymentLog.findMany({ where: { deploymentId: redeploy }, orderBy: { seq: 'asc' } })
    )
      .map((line) => line.message)
      .join('\n');
    const held = /The new release held after ([\d.]+) s/.exec(log);
    expect(Number(held?.[1])).toBeGreaterThanOrEqual(WINDOW_MS / 1000);
  });
});
