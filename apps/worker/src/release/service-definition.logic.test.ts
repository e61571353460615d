// Issue 27, class 3: what the API reports as a service's variables and compose is what its release
// runs. A PATCH writes the new variables on the service and queues the deployment that applies
// them; when that deployment fails or is cancelled, the service gets back the running release's.
import { setTimeout as sleep } from 'node:timers/promises';
import { queueRedeploy } from '@hostctl/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReleaseHarness, type ReleaseHarness } from '../testing/release-harness.js';

const IMAGE = 'local/definition-app:1';
const composeOf = (image: string) => `services:\n  web:\n    image: ${image}\n    ports: ["8080"]\n`;
const ROTATED = { DB_PASSWORD: 'rotated-v2' };
const PENDING = { DB_PASSWORD: 'rotated-v3' };

let h: ReleaseHarness;
beforeAll(() => {
  h = createReleaseHarness({ stabilizationMs: 200, drainMs: 200 });
});
afterAll(() => h.close());

const serviceOf = (id: string) => h.db.service.findUniqueOrThrow({ where: { id } });

/** A service whose release runs ROTATED, then the owner's PATCH to PENDING (as the API writes it). */
async function withPendingChange(compose = composeOf(IMAGE)) {
  h.runtime.addImage(IMAGE);
  const service = await h.deploy(composeOf(IMAGE));
  await h.db.service.update({ where: { id: service.serviceId }, data: { variables: ROTATED } });
  expect(await h.run(service.deploymentId)).toEqual({ status: 'succeeded' });
  await h.db.service.update({ where: { id: service.serviceId }, data: { variables: PENDING } });
  return { serviceId: service.serviceId, change: await h.redeploy(service.serviceId, compose) };
}

describe('the service reports what its release runs', () => {
  it('a change whose deployment fails: the running release’s variables and compose come back', async () => {
    const { serviceId, change } = await withPendingChange(composeOf('local/definition-missing:1'));
    await h.run(change, 1, 1);
    expect(await h.db.deployment.findUniqueOrThrow({ where: { id: change } })).toMatchObject({
      status: 'failed',
    });
    const service = await serviceOf(serviceId);
    expect(service.variables).toEqual(ROTATED);
    expect(service.compose).toBe(composeOf(IMAGE));
  });

  it('a change cancelled while it runs: the running release’s variables come back', async () => {
    const { serviceId, change } = await withPendingChange();
    h.at('create', 'before', async (id) => {
      expect(await h.cancelAsApi(id)).toBe(true);
    });
    expect(await h.run(change)).toEqual({ status: 'cancelled' });
    expect((await serviceOf(serviceId)).variables).toEqual(ROTATED);
  });

  it('a deployment that succeeds gives the service what it ran, not a later change that never ran', async () => {
    const { serviceId, change } = await withPendingChange();
    // After this deployment recorded PENDING, another PATCH (whose own deployment was then
    // cancelled while this one still ran) left other values on the service row.
    h.at('pull', 'before', async () => {
      await h.db.service.update({
        where: { id: serviceId },
        data: { variables: { DB_PASSWORD: 'never-ran' } },
      });
    });
    expect(await h.run(change)).toEqual({ status: 'succeeded' });
    expect((await serviceOf(serviceId)).variables).toEqual(PENDING);
  });

  it('a PATCH that joins the queued deployment as a worker picks it up is what that deployment runs', async () => {
    const { serviceId, change } = await withPendingChange();
    const latest = { DB_PASSWORD: 'rotated-v4' };
    let joined: string | undefined;
    let patched: Promise<unknown> = Promise.resolve();
    // The worker has read the service; the owner's PATCH (as the API runs it: new variables and
    // queueRedeploy in one transaction) has joined the still-queued deployment and commits while
    // the worker claims it.
    h.afterServiceRead(async () => {
      let holding!: () => void;
      const joinedQueue = new Promise<void>((resolve) => (holding = resolve));
      patched = h.db.$transaction(async (tx) => {
        await tx.service.update({ where: { id: serviceId }, data: { variables: latest } });
        joined = (await queueRedeploy(tx, serviceId)).deployment.id;
        holding();
        await sleep(500);
      });
      await joinedQueue;
    });
    expect(await h.run(change)).toEqual({ status: 'succeeded' });
    await patched;
    expect(joined).toBe(change);
    const ran = await h.db.deployment.findUniqueOrThrow({ where: { id: change } });
    expect(ran.sourceVariables).toEqual(latest);
    expect((await serviceOf(serviceId)).variables).toEqual(latest);
  });
});
