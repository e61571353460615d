import { SERVICE_LABEL, DEPLOYMENT_LABEL } from '@hostctl/domain';
import { QUEUES } from '@hostctl/queue';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDockerRuntime } from './adapters/docker-runtime.js';
import { noopRouter } from './adapters/router.js';
import { removeAll } from './runtime/engine-objects.js';
import {
  createComposeService,
  createRedeployment,
  createTestDb,
  deleteServiceRows,
  silentLogger,
  testConfig,
  uniquePrefix,
  waitFor,
  waitForDeployment,
  type CreatedService,
} from './testing/fixtures.js';
import { createWorkerApp } from './worker-app.js';

// Several jobs for one service at once, on two "replicas" (two apps sharing queues and database):
// the per-service lock serialises them, the latest request wins, and a delete beats a deploy.
const prefix = uniquePrefix('concurrency');
const db = createTestDb();
const runtime = createDockerRuntime({ socketPath: '/var/run/docker.sock' });
const options = { logger: silentLogger, reconcile: false, readiness: { timeoutMs: 30_000, stableMs: 300 } };
const replicas = [createWorkerApp(testConfig(prefix), options), createWorkerApp(testConfig(prefix), options)];
const [app] = replicas as [ReturnType<typeof createWorkerApp>];
const created: CreatedService[] = [];
const WEB = 'services:\n  web:\n    image: local/busybox:1\n    ports: ["8080"]\n';

beforeAll(async () => {
  for (const replica of replicas) await replica.start();
});

afterAll(async () => {
  for (const item of created)
    await removeAll({ runtime, router: noopRouter, instance: prefix }, item.serviceId).catch(() => undefined);
  await deleteServiceRows(db, created);
  for (const name of Object.values(QUEUES)) await app.producer.queue(name).obliterate({ force: true });
  for (const replica of replicas) await replica.close(5000);
  await db.$disconnect();
});

describe('concurrent jobs for one service', () => {
  it('supersedes an interrupted deployment when a newer one was requested: the latest wins', async () => {
    const service = await createComposeService(db, { compose: WEB });
    created.push(service);
    // As if a worker died mid-run: the deployment is running and its job comes back later.
    await db.deployment.update({
      where: { id: service.deploymentId },
      data: { status: 'running', startedAt: new Date() },
    });
    const newer = await createRedeployment(db, service.serviceId);
    await app.producer.enqueue('deploy', { deploymentId: service.deploymentId });
    await app.producer.enqueue('deploy', { deploymentId: newer });
    expect((await waitForDeployment(db, newer)).status).toBe('succeeded');
    expect((await waitForDeployment(db, service.deploymentId)).status).toBe('superseded');
    // The timeline and the deployment's own log say what happened to it.
    const said = `Deployment ${service.deploymentId} superseded by the newer deployment ${newer}; it was not completed`;
    const events = await db.serviceEvent.findMany({
      where: { serviceId: service.serviceId, status: 'info' },
    });
    expect(events.map((event) => [event.type, event.message])).toEqual([['deploy', said]]);
    const logs = await db.deploymentLog.findMany({ where: { deploymentId: service.deploymentId } });
    expect(logs.map((log) => log.message)).toContain(said);
    const containers = await runtime.listContainers({ [SERVICE_LABEL]: service.serviceId });
    expect(containers.map((container) => container.labels[DEPLOYMENT_LABEL])).toEqual([newer]);
    expect((await db.service.findUniqueOrThrow({ where: { id: service.serviceId } })).status).toBe('running');
  });

  it('runs a redeploy that arrives mid-deploy after it, never alongside it', async () => {
    const slow =
      'services:\n  web:\n    image: local/busybox:1\n    command: ["sh", "-c", "sleep 2; exec httpd -f -p 8080 -h /www"]\n    ports: ["8080"]\n';
    const service = await createComposeService(db, { compose: slow });
    created.push(service);
    await app.producer.enqueue('deploy', { deploymentId: service.deploymentId });
    await waitFor(
      'first deployment verifying',
      async () =>
        (await db.deployment.findUniqueOrThrow({ where: { id: service.deploymentId } })).step === 'verify',
    );
    const second = await createRedeployment(db, service.serviceId);
    await app.producer.enqueue('deploy', { deploymentId: second });
    const counts = new Set<number>();
    const watch = setInterval(
      () =>
        void runtime
          .listContainers({ [SERVICE_LABEL]: service.serviceId })
          .then((list) => counts.add(list.length)),
      50,
    );
    const first = await waitForDeployment(db, service.deploymentId);
    const last = await waitForDeployment(db, second).finally(() => clearInterval(watch));
    expect([first.status, last.status]).toEqual(['succeeded', 'succeeded']);
    expect(last.startedAt!.getTime()).toBeGreaterThanOrEqual(first.finishedAt!.getTime());
    // One container per set: the second deployment cuts over start-first, so never more than two.
    expect(Math.max(...counts)).toBeLessThanOrEqual(2);
    expect(
      (await runtime.listContainers({ [SERVICE_LABEL]: service.serviceId })).map(
        (c) => c.labels[DEPLOYMENT_LABEL],
      ),
    ).toEqual([second]);
    expect((await db.service.findUniqueOrThrow({ where: { id: service.serviceId } })).status).toBe('running');
  });

  it('a delete cancels a deployment stuck waiting and removes everything', async () => {
    const never =
      'services:\n  web:\n    image: local/busybox:1\n    command: ["sleep", "3600"]\n    ports: ["8080"]\nvolumes:\n  data: {}\n';
    const service = await createComposeService(db, { compose: never });
    created.push(service);
    await app.producer.enqueue('deploy', { deploymentId: service.deploymentId });
    await waitFor(
      'deployment verifying',
      async () =>
        (await db.deployment.findUniqueOrThrow({ where: { id: service.deploymentId } })).step === 'verify',
    );
    const started = Date.now();
    await db.service.update({ where: { id: service.serviceId }, data: { deletedAt: new Date() } });
    await app.producer.enqueue('delete', { serviceId: service.serviceId });
    expect((await waitForDeployment(db, service.deploymentId)).status).toBe('cancelled');
    await waitFor(
      'purge',
      async () => (await db.service.findUniqueOrThrow({ where: { id: service.serviceId } })).purgedAt,
    );
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(await runtime.listContainers({ [SERVICE_LABEL]: service.serviceId })).toEqual([]);
    expect(await runtime.listNetworks({ [SERVICE_LABEL]: service.serviceId })).toEqual([]);
    expect(await runtime.listVolumes({ [SERVICE_LABEL]: service.serviceId })).toEqual([]);
  });
});
