import { COMPONENT_LABEL, SERVICE_LABEL } from '@hostctl/domain';
import { beforeAll, describe, expect, it } from 'vitest';
import { RESTORE_BUDGET } from './service-restorer.js';
import { createComposeService, httpGet, waitForDeployment, type CreatedService } from './testing/fixtures.js';
import { useWorkerApp } from './testing/worker-fixture.js';

// A running service whose containers died behind our back (Docker restarted, `docker rm` by hand)
// is rebuilt by the reconciler from its last successful deployment; one that keeps dying is failed.
const { db, runtime, app, created } = useWorkerApp('restore', {
  app: { readiness: { timeoutMs: 30_000, stableMs: 300 } },
});
const WEB = 'services:\n  web:\n    image: local/busybox:1\n    ports: ["8080"]\n';
let service: CreatedService;

const containersOf = () => runtime.listContainers({ [SERVICE_LABEL]: service.serviceId });
const statusOf = async () =>
  (await db.service.findUniqueOrThrow({ where: { id: service.serviceId } })).status;
const eventsOf = async () =>
  (
    await db.serviceEvent.findMany({
      where: { serviceId: service.serviceId, type: { in: ['restart', 'status'] } },
      orderBy: { id: 'asc' },
    })
  ).map((event) => `${event.type} ${event.status}: ${event.message}`);

beforeAll(async () => {
  // The worker's files run one at a time on one database, and a reconciler owns every service of
  // its database, as an installation's does: a service an earlier file left `running` (its rows
  // kept, its containers gone) would be restored or failed by this file's sweeps too and change the
  // counts checked here (a rehearsal saw servicesFailed 1 from clone-restore's, which now cleans
  // up). Any left anyway are stopped first.
  await db.service.updateMany({ where: { status: 'running' }, data: { status: 'stopped' } });
  service = await createComposeService(db, { compose: WEB });
  created.push(service);
  await app.producer.enqueue('deploy', { deploymentId: service.deploymentId });
  expect((await waitForDeployment(db, service.deploymentId)).status).toBe('succeeded');
});

describe('the reconciler restores running services', () => {
  it('recreates a container removed by hand from the last successful deployment', async () => {
    const [before] = await containersOf();
    await runtime.removeContainer(before!.id);

    const repairs = await app.reconciler.runOnce();
    expect(repairs).toMatchObject({ servicesRestored: 1, servicesFailed: 0 });
    const [after] = await containersOf();
    expect(after!.id).not.toBe(before!.id);
    const state = await runtime.inspectContainer(after!.id);
    expect((await httpGet(state!.ip!, 8080)).body).toBe('hello from busybox\n');
    expect(await statusOf()).toBe('running');
    expect(await eventsOf()).toEqual([
      'restart success: Reconciler restored the service: its containers are missing',
    ]);
  });

  it('starts a container that exited (as after a Docker restart) and leaves a healthy one alone', async () => {
    const [container] = await containersOf();
    await runtime.stopContainer(container!.id, 0);

    expect(await app.reconciler.runOnce()).toMatchObject({ servicesRestored: 1 });
    expect((await runtime.inspectContainer(container!.id))?.isRunning).toBe(true);
    expect(await app.reconciler.runOnce()).toMatchObject({ servicesRestored: 0, servicesFailed: 0 });
    expect((await eventsOf()).at(-1)).toMatch(
      /^restart success: Reconciler restored the service: container web exited with code \d+$/,
    );
  });

  it('recreates one missing container of a service whose other containers still run', async () => {
    const pair = await createComposeService(db, {
      compose: `${WEB}  sidecar:\n    image: local/busybox:1\n`,
    });
    created.push(pair);
    await app.producer.enqueue('deploy', { deploymentId: pair.deploymentId });
    expect((await waitForDeployment(db, pair.deploymentId)).status).toBe('succeeded');
    const byComponent = async () =>
      new Map(
        (await runtime.listContainers({ [SERVICE_LABEL]: pair.serviceId })).map((c) => [
          c.labels[COMPONENT_LABEL],
          c.id,
        ]),
      );
    const before = await byComponent();
    await runtime.removeContainer(before.get('sidecar')!);

    expect(await app.reconciler.runOnce()).toMatchObject({ servicesRestored: 1, servicesFailed: 0 });
    const after = await byComponent();
    expect([...after.keys()].sort()).toEqual(['sidecar', 'web']);
    expect(after.get('web')).toBe(before.get('web'));
    expect((await runtime.inspectContainer(after.get('sidecar')!))?.isRunning).toBe(true);
    const events = await db.serviceEvent.findMany({ where: { serviceId: pair.serviceId, type: 'restart' } });
    expect(events.map((event) => `${event.status}: ${event.message}`)).toEqual([
      'success: Reconciler restored the service: container sidecar is missing',
    ]);
  });

  it('records a failed restore and retries it at the next sweep instead of failing the service', async () => {
    const other = await createComposeService(db, { compose: WEB });
    created.push(other);
    await app.producer.enqueue('deploy', { deploymentId: other.deploymentId });
    expect((await waitForDeployment(db, other.deploymentId)).status).toBe('succeeded');
    // As if the engine lost the image meanwhile: the plan names one that is not there.
    const deployment = await db.deployment.findUniqueOrThrow({ where: { id: other.deploymentId } });
    const plan = deployment.plan as { containers: { image: string }[] };
    plan.containers[0]!.image = 'local/no-such-image:1';
    await db.deployment.update({ where: { id: other.deploymentId }, data: { plan } });
    for (const container of await runtime.listContainers({ [SERVICE_LABEL]: other.serviceId }))
      await runtime.removeContainer(container.id);

    expect(await app.reconciler.runOnce()).toMatchObject({ servicesRestored: 0, servicesFailed: 0 });
    expect((await db.service.findUniqueOrThrow({ where: { id: other.serviceId } })).status).toBe('running');
    const events = await db.serviceEvent.findMany({ where: { serviceId: other.serviceId, type: 'restart' } });
    expect(events.map((event) => `${event.status}: ${event.message}`)).toEqual([
      expect.stringMatching(
        /^failed: Reconciler restore failed: its containers are missing; .*no-such-image/,
      ),
    ]);
  });

  it('marks a service failed with the reason once it keeps dying', async () => {
    const [container] = await containersOf();
    for (let i = 2; i < RESTORE_BUDGET; i++) {
      await db.serviceEvent.create({
        data: {
          serviceId: service.serviceId,
          type: 'restart',
          status: 'failed',
          message: 'Reconciler restore failed: test',
        },
      });
    }
    await runtime.stopContainer(container!.id, 0);

    expect(await app.reconciler.runOnce()).toMatchObject({ servicesRestored: 0, servicesFailed: 1 });
    expect(await statusOf()).toBe('failed');
    expect((await eventsOf()).at(-1)).toMatch(
      new RegExp(
        `^status failed: Service failed: container web exited with code \\d+; the reconciler already tried ${RESTORE_BUDGET} restores in the last 10 minutes$`,
      ),
    );
  });
});
