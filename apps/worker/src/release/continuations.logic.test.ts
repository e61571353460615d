// A release in its window (stabilise, drain) pauses instead of holding the worker: its job goes
// to the delayed set and comes back to look at the evidence again. What a user and an operator
// rely on: the window lasts as long as it would have in place, nothing else changes the service
// meanwhile, a cancel or a delete while it pauses is honoured, and its time limit still holds.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkerDeploymentStore } from '@hostctl/db';
import { SimulatedCrash, createReleaseHarness, type ReleaseHarness } from '../testing/release-harness.js';
import { TEST_IMAGE } from '../testing/test-env.js';

const compose = `services:
  web:
    image: ${TEST_IMAGE}
    ports: ["8080"]
`;
const WINDOW_MS = 2000;

let h: ReleaseHarness;
beforeAll(() => {
  h = createReleaseHarness({ stabilizationMs: WINDOW_MS, drainMs: WINDOW_MS });
});
afterAll(() => h.close());

async function runningService() {
  const service = await h.deploy(compose);
  expect(await h.run(service.deploymentId)).toEqual({ status: 'succeeded' });
  return service;
}

const secondsIn = (log: string, pattern: RegExp) =>
  [...log.matchAll(pattern)].map((match) => Number(match[1]));

describe('a release in its window', () => {
  it('pauses its job in both windows, and each window still lasts its full length', async () => {
    const service = await runningService();
    const redeploy = await h.redeploy(service.serviceId);
    const pausesBefore = h.pauses;
    expect(await h.run(redeploy)).toEqual({ status: 'succeeded' });
    // Each window of 2 s is at least one pause (a look every second at most).
    expect(h.pauses - pausesBefore).toBeGreaterThanOrEqual(2);
    const log = await h.logOf(redeploy);
    const held = secondsIn(log, /held after ([\d.]+) s/g);
    const drained = secondsIn(log, /Drained after ([\d.]+) s/g);
    expect(held).toHaveLength(1);
    expect(drained).toHaveLength(1);
    // Counted from the window's recorded start, not from each resumed job.
    for (const seconds of [...held, ...drained]) expect(seconds).toBeGreaterThanOrEqual(WINDOW_MS / 1000);
    // Said once per window, not once per look.
    expect(log.match(/Watching the new release before it receives traffic/g)).toHaveLength(1);
    expect(log.match(/Deploying /g)).toHaveLength(1);
    const row = await h.db.deployment.findUniqueOrThrow({ where: { id: redeploy } });
    expect(row.windowStartedAt).toBeNull();
  });

  it('keeps another deployment of the service waiting until it is settled', async () => {
    const service = await runningService();
    const first = await h.redeploy(service.serviceId);
    h.at('drain', 'after', async () => {
      throw new SimulatedCrash('drain');
    });
    expect(await h.run(first, 1)).toBeInstanceOf(SimulatedCrash);
    const second = await h.redeploy(service.serviceId);
    // The first release took the traffic and is draining the previous one: the second must not
    // cut over from under it.
    expect(await h.run(second, 1, 3, { once: true })).toEqual({ status: 'delayed' });
    expect((await h.db.deployment.findUniqueOrThrow({ where: { id: second } })).status).toBe('queued');
    expect(await h.run(first, 2)).toEqual({ status: 'succeeded' });
    expect(await h.run(second)).toEqual({ status: 'succeeded' });
    expect(await h.setsOf(service.serviceId)).toEqual(new Set([second]));
  });

  it('undoes at once when cancelled while it pauses: the previous release serves again', async () => {
    const slow = createReleaseHarness({ stabilizationMs: 5000, drainMs: 60_000 });
    try {
      const service = await slow.deploy(compose);
      expect(await slow.run(service.deploymentId)).toEqual({ status: 'succeeded' });
      const redeploy = await slow.redeploy(service.serviceId);
      let cancelledAt = 0;
      slow.at('drain', 'after', async (id) => {
        setTimeout(() => {
          cancelledAt = Date.now();
          void slow.cancelAsApi(id);
        }, 300);
      });
      expect(await slow.run(redeploy)).toEqual({ status: 'cancelled' });
      // Within a pause (at most a second) and the undo, not at the end of the 60 s drain.
      expect(Date.now() - cancelledAt).toBeLessThan(10_000);
      const previous = await slow.webOf(service.serviceId, service.deploymentId);
      expect(slow.routes.get(service.serviceId)?.targets[0]?.host).toBe(previous!.ip);
      expect(await slow.setsOf(service.serviceId)).toEqual(new Set([service.deploymentId]));
      const row = await slow.db.deployment.findUniqueOrThrow({ where: { id: redeploy } });
      expect(row).toMatchObject({ status: 'cancelled', windowStartedAt: null });
      expect((await slow.db.service.findUniqueOrThrow({ where: { id: service.serviceId } })).status).toBe(
        'running',
      );
    } finally {
      await slow.close();
    }
  });

  it('counts its time limit from the claim, not from each resumed job', async () => {
    const service = await runningService();
    const redeploy = await h.redeploy(service.serviceId);
    h.at('drain', 'after', async (id) => {
      // As if the deployment had been claimed longer ago than the harness's 30 s limit.
      await h.db.deployment.update({ where: { id }, data: { startedAt: new Date(Date.now() - 31_000) } });
      throw new SimulatedCrash('drain');
    });
    expect(await h.run(redeploy, 1)).toBeInstanceOf(SimulatedCrash);
    expect(await h.run(redeploy, 2)).toBeInstanceOf(Error);
    const row = await h.db.deployment.findUniqueOrThrow({ where: { id: redeploy } });
    expect(row).toMatchObject({ status: 'rolled_back', windowStartedAt: null });
    expect(row.error).toMatch(/did not finish within 30s/);
    const previous = await h.webOf(service.serviceId, service.deploymentId);
    expect(h.routes.get(service.serviceId)?.targets[0]?.host).toBe(previous!.ip);
  });

  it('leaves the service free when the service is deleted while it pauses', async () => {
    const service = await runningService();
    const redeploy = await h.redeploy(service.serviceId);
    h.at('stabilize', 'after', async () => {
      throw new SimulatedCrash('stabilize');
    });
    expect(await h.run(redeploy, 1)).toBeInstanceOf(SimulatedCrash);
    await h.db.service.update({ where: { id: service.serviceId }, data: { deletedAt: new Date() } });
    const store = createWorkerDeploymentStore(h.db);
    await store.cancelInFlight(service.serviceId);
    // The delete's own job does not wait for the window; the paused job gives the service up.
    expect(await store.otherInWindow(service.serviceId)).toBe(true);
    expect(await h.run(redeploy, 2)).toEqual({ status: 'skipped' });
    expect(await store.otherInWindow(service.serviceId)).toBe(false);
  });

  it('frees the service when a worker that knows no windows settled the release (a rolling upgrade)', async () => {
    const service = await runningService();
    const first = await h.redeploy(service.serviceId);
    h.at('stabilize', 'after', async () => {
      throw new SimulatedCrash('stabilize');
    });
    expect(await h.run(first, 1)).toBeInstanceOf(SimulatedCrash);
    // The previous release's worker took the job and settled it its own way: window still marked.
    await h.db.deployment.update({
      where: { id: first },
      data: { status: 'succeeded', finishedAt: new Date() },
    });
    const store = createWorkerDeploymentStore(h.db);
    expect(await store.otherInWindow(service.serviceId)).toBe(false);
    const second = await h.redeploy(service.serviceId);
    expect(await h.run(second)).toEqual({ status: 'succeeded' });
    // The reconciler brings the settled one's job back: the stale mark is cleared.
    expect(await h.run(first)).toEqual({ status: 'succeeded' });
    expect((await h.db.deployment.findUniqueOrThrow({ where: { id: first } })).windowStartedAt).toBeNull();
  });
});
