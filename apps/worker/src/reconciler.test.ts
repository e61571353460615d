import { randomUUID } from 'node:crypto';
import { DEPLOYMENT_LABEL, OWNER_LABEL, SERVICE_LABEL, INSTANCE_LABEL } from '@hostctl/domain';
import { QUEUES, jobIds } from '@hostctl/queue';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createComposeService, waitFor } from './testing/fixtures.js';
import { TEST_IMAGE } from './testing/test-env.js';
import { useWorkerApp } from './testing/worker-fixture.js';

// The reconciler repairs what it owns and never touches anything else. Workers are not started
// here: the sweep alone must do the repairs.
// Only the sweep's own code runs: no workers, no timer.
const { prefix, db, runtime, app, created } = useWorkerApp('reconcile', {
  start: false,
  closeTimeoutMs: 1000,
});
const strays: string[] = [];

async function container(name: string, labels: Record<string, string>): Promise<string> {
  const id = await runtime.createContainer({
    name: `${prefix}-${name}`,
    image: TEST_IMAGE,
    command: ['sleep', '3600'],
    env: [],
    labels,
    exposedPorts: [],
    init: true,
    restart: { name: 'no' },
    mounts: [],
    network: 'bridge',
    aliases: [],
  });
  strays.push(id);
  await runtime.startContainer(id);
  return id;
}

beforeAll(async () => {
  await app.producer.queue(QUEUES.deployments).waitUntilReady();
});

// Runs before the fixture's teardown (after-hooks run in stack order): strays go before services.
afterAll(async () => {
  for (const id of strays) await runtime.removeContainer(id);
});

describe('reconciler', () => {
  it('removes a labelled orphan and leaves unlabelled and foreign objects alone', async () => {
    const orphanService = randomUUID();
    const orphan = await container('orphan', {
      [OWNER_LABEL]: 'true',
      [SERVICE_LABEL]: orphanService,
      [INSTANCE_LABEL]: prefix,
    });
    await runtime.ensureVolume(`${prefix}-orphan-vol`, {
      [OWNER_LABEL]: 'true',
      [SERVICE_LABEL]: orphanService,
      [INSTANCE_LABEL]: prefix,
    });
    const unlabelled = await container('unlabelled', {});
    const otherInstallation = await container('foreign', {
      [OWNER_LABEL]: 'true',
      [SERVICE_LABEL]: randomUUID(),
      [INSTANCE_LABEL]: `${prefix}-other`,
    });

    const repairs = await app.reconciler.runOnce();
    expect(repairs?.orphansRemoved).toBeGreaterThanOrEqual(2);
    expect(await runtime.inspectContainer(orphan)).toBeNull();
    expect(await runtime.listVolumes({ [SERVICE_LABEL]: orphanService })).toEqual([]);
    expect((await runtime.inspectContainer(unlabelled))?.isRunning).toBe(true);
    expect((await runtime.inspectContainer(otherInstallation))?.isRunning).toBe(true);
  });

  it('re-enqueues a deployment accepted in PostgreSQL whose job never reached Redis', async () => {
    const service = await createComposeService(db, {
      compose: `services:\n  web:\n    image: ${TEST_IMAGE}\n`,
    });
    created.push(service);
    await db.deployment.update({
      where: { id: service.deploymentId },
      data: { createdAt: new Date(Date.now() - 60_000) },
    });
    const queue = app.producer.queue(QUEUES.deployments);
    const jobId = jobIds.deploy({ deploymentId: service.deploymentId });
    expect(await queue.getJob(jobId)).toBeUndefined();
    await app.reconciler.runOnce();
    expect((await queue.getJob(jobId))?.data).toEqual({ deploymentId: service.deploymentId });
    // A second sweep sees the job waiting and leaves it.
    await app.reconciler.runOnce();
    expect(await queue.getJobCounts('waiting')).toMatchObject({ waiting: expect.any(Number) });
  });

  it('re-enqueues the delete of a service deleted but not purged', async () => {
    const service = await createComposeService(db, {
      compose: `services:\n  web:\n    image: ${TEST_IMAGE}\n`,
    });
    created.push(service);
    await db.service.update({ where: { id: service.serviceId }, data: { deletedAt: new Date() } });
    await app.reconciler.runOnce();
    expect(
      await app.producer.queue(QUEUES.deployments).getJob(jobIds.delete({ serviceId: service.serviceId })),
    ).toBeDefined();
  });

  it('marks a running service whose container exited, with nothing to restore it from, as failed, once', async () => {
    const service = await createComposeService(db, {
      compose: `services:\n  web:\n    image: ${TEST_IMAGE}\n`,
    });
    created.push(service);
    await db.service.update({ where: { id: service.serviceId }, data: { status: 'running' } });
    await db.deployment.update({ where: { id: service.deploymentId }, data: { status: 'succeeded' } });
    const id = await container(`crash-${service.serviceId.slice(0, 8)}`, {
      [OWNER_LABEL]: 'true',
      [SERVICE_LABEL]: service.serviceId,
      [INSTANCE_LABEL]: prefix,
      [DEPLOYMENT_LABEL]: service.deploymentId,
      'io.hostctl.component': 'web',
    });
    await runtime.stopContainer(id, 0);
    await waitFor('exit', async () => (await runtime.inspectContainer(id))?.isRunning === false);

    await app.reconciler.runOnce();
    await app.reconciler.runOnce();
    expect((await db.service.findUniqueOrThrow({ where: { id: service.serviceId } })).status).toBe('failed');
    const events = await db.serviceEvent.findMany({
      where: { serviceId: service.serviceId, type: 'status' },
    });
    expect(events.map((event) => [event.status, event.message])).toEqual([
      [
        'failed',
        expect.stringMatching(
          /^Service failed: container web exited with code \d+; no successful deployment to restore it from$/,
        ),
      ],
    ]);
  });
});
