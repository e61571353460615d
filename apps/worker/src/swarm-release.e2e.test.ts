import Docker from 'dockerode';
import { createDeploymentsStore } from '@hostctl/db';
import { SERVICE_LABEL, DEPLOYMENT_LABEL, STANDBY_LABEL } from '@hostctl/domain';
import type { LifecycleResult } from '@hostctl/queue';
import { describe, expect, it } from 'vitest';
import {
  createComposeService,
  createRedeployment,
  waitFor,
  waitForDeployment,
  type CreatedService,
} from './testing/fixtures.js';
import { createSwarmRestarts } from './adapters/swarm-restarts.js';
import { execIn } from './testing/container-exec.js';
import { viaCaddy } from './testing/network-fixtures.js';
import { deploymentLog } from './testing/repository-fixtures.js';
import { TEST_IMAGE, swarmTestSocket } from './testing/test-env.js';
import { useSwarmWorkerApp } from './testing/swarm-worker-fixture.js';

// RUNTIME=swarm through the worker's own processors, against the swarm engine of the dev stack
// (scripts/lib/swarm-engine.sh) and the real Caddy: a deployment runs as a Swarm service and
// answers at its public name; a redeploy replaces the task while a visitor keeps getting answers;
// a failed update is reported from Swarm's rollback with the previous release still answering;
// delete leaves nothing of the service on the swarm nor in Caddy.
const socketPath = swarmTestSocket();
const swarmEngine = new Docker({ socketPath });
const worker = useSwarmWorkerApp('swarm', {
  env: { RELEASE_STABILIZATION_MS: '2000' },
  app: { observe: false, readiness: { timeoutMs: 60_000, stableMs: 300 } },
  operationEvents: true,
});
const { db, app } = worker;

// One replica until the scaling test: with one task, a start-first replacement always moves the
// service to a new port, so a route that did not follow the tasks would be seen failing.
const compose = (options: { command?: string; replicas?: number; isNeverHealthy?: boolean } = {}) =>
  `services:\n  web:\n    image: ${TEST_IMAGE}\n    ports: ["8080"]\n    deploy: {replicas: ${options.replicas ?? 1}}\n` +
  (options.command ? `    command: ["sh", "-c", "${options.command}"]\n    restart: "no"\n` : '') +
  (options.isNeverHealthy
    ? `    healthcheck: {test: ["CMD", "false"], interval: 1s, timeout: 1s, retries: 1}\n`
    : '');

/** Every Swarm service of the hostctl service, a standby (held during an update) too. */
const allSwarmServicesOf = async (serviceId: string) =>
  swarmEngine.listServices({ filters: { label: [`${SERVICE_LABEL}=${serviceId}`] } });
/** The Swarm services of the plan's components. */
const swarmServicesOf = async (serviceId: string) =>
  (await allSwarmServicesOf(serviceId)).filter((service) => !service.Spec?.Labels?.[STANDBY_LABEL]);

async function lifecycle(serviceId: string, action: 'start' | 'stop' | 'restart') {
  const job = await app.producer.enqueue('lifecycle', { serviceId, action });
  return (await job.waitUntilFinished(worker.operationEvents, 60_000)) as LifecycleResult;
}

const runningTasks = async (serviceId: string) =>
  (
    await swarmEngine.listTasks({
      filters: { label: [`${SERVICE_LABEL}=${serviceId}`], 'desired-state': ['running'] },
    })
  ).map((task: { ID: string }) => task.ID);

async function redeploy(serviceId: string): Promise<string> {
  const deploymentId = await createRedeployment(db, serviceId);
  await app.producer.enqueue('deploy', { deploymentId });
  return deploymentId;
}

/** Asks the service's public name every 50 ms until stopped; counts answers that were not the service's. */
function visitor(host: string) {
  let stopped = false;
  const failures: string[] = [];
  let answers = 0;
  const done = (async () => {
    while (!stopped) {
      const answer = await viaCaddy(host).catch((error: Error) => ({ status: 0, body: error.message }));
      if (answer.status === 200) answers += 1;
      else failures.push(`${answer.status} ${answer.body.slice(0, 80)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await done;
      return { answers, failures };
    },
  };
}

describe('RUNTIME=swarm: the worker runs releases as Swarm services', { timeout: 180_000 }, () => {
  let service: CreatedService;
  let host: string;
  let first: string;

  it('deploys a compose service as a Swarm service that answers at its public name', async () => {
    service = worker.track(await createComposeService(db, { compose: compose() }));
    host = `${(await db.service.findUniqueOrThrow({ where: { id: service.serviceId } })).name}.apps.localhost`;
    await app.producer.enqueue('deploy', { deploymentId: service.deploymentId });
    const deployment = await waitForDeployment(db, service.deploymentId, 120_000);
    expect(deployment.status, (await deploymentLog(db, service.deploymentId)).join('\n')).toBe('succeeded');
    first = service.deploymentId;

    const [swarmService, ...others] = await swarmServicesOf(service.serviceId);
    expect(others).toEqual([]);
    expect(swarmService?.Spec?.Labels?.[DEPLOYMENT_LABEL]).toBe(first);
    // local/busybox:1 exists only on the dev engine: the nodes run it from the registry, by digest.
    const image = (swarmService?.Spec?.TaskTemplate as { ContainerSpec?: { Image?: string } }).ContainerSpec
      ?.Image;
    expect(image).toMatch(/^127\.0\.0\.1:5000\/hostctl\/hostctl-[0-9a-f]{12}-web@sha256:[0-9a-f]{64}$/);
    expect((await deploymentLog(db, first)).join('\n')).toContain(
      `Pushed ${TEST_IMAGE} to 127.0.0.1:5000 for the nodes: ${image}`,
    );
    expect(await viaCaddy(host)).toEqual({ status: 200, body: 'hello from busybox\n' });
    expect((await deploymentLog(db, first)).join('\n')).toMatch(
      /Routing http:\/\/svc-[^ ]+ to 127\.0\.0\.1:\d+$/m,
    );
    expect((await db.service.findUniqueOrThrow({ where: { id: service.serviceId } })).status).toBe('running');
  });

  it('a redeploy replaces the task start-first while the public name keeps answering', async () => {
    const watching = visitor(host);
    const deploymentId = await redeploy(service.serviceId);
    const deployment = await waitForDeployment(db, deploymentId, 120_000);
    const seen = await watching.stop();
    expect(deployment.status, (await deploymentLog(db, deploymentId)).join('\n')).toBe('succeeded');
    expect(seen.failures).toEqual([]);
    expect(seen.answers).toBeGreaterThan(5);
    const [swarmService] = await swarmServicesOf(service.serviceId);
    expect(swarmService?.Spec?.Labels?.[DEPLOYMENT_LABEL]).toBe(deploymentId);
    first = deploymentId;
  });

  it('its task runs with no_new_privs, which the swarm engine’s daemon.json sets for every container', async () => {
    // API 1.41 has no field for it in a service spec (docs/multi-host.md, Limits).
    const [container] = await swarmEngine.listContainers({
      filters: { label: [`${SERVICE_LABEL}=${service.serviceId}`], status: ['running'] },
    });
    const status = await execIn(swarmEngine, container!.Id, ['grep', 'NoNewPrivs', '/proc/1/status']);
    expect(status.output).toMatch(/NoNewPrivs:\s*1/);
  });

  it('an update no job follows (its worker died) keeps answering: every worker follows Swarm’s updates', async () => {
    // Swarm carries an update on without the worker that started it; a forced update written
    // straight to the engine is such an update: no deploy job, no lock held, no reconciler here.
    const before = await runningTasks(service.serviceId);
    const watching = visitor(host);
    app.updateFollower?.start();
    try {
      await createSwarmRestarts(swarmEngine, worker.prefix).restart(service.serviceId, ['web']);
      await waitFor(
        'Swarm to finish the update and stop the old task',
        async () => {
          const [swarmService] = await swarmServicesOf(service.serviceId);
          const old = await swarmEngine.listTasks({ filters: { id: before } });
          return (
            swarmService?.UpdateStatus?.State === 'completed' &&
            old.every((task: { Status?: { State?: string } }) => task.Status?.State !== 'running')
          );
        },
        60_000,
      );
    } finally {
      await app.updateFollower?.stop();
    }
    const seen = await watching.stop();
    // The old task's port is closed now: a route left on it would answer 502.
    expect(await viaCaddy(host)).toEqual({ status: 200, body: 'hello from busybox\n' });
    expect(seen.failures).toEqual([]);
    expect((await runningTasks(service.serviceId)).filter((id) => before.includes(id))).toEqual([]);
  });

  it('a failed update is read from Swarm’s rollback: a release never healthy, never routed, fails; the previous one answers', async () => {
    await db.service.update({
      where: { id: service.serviceId },
      data: { compose: compose({ isNeverHealthy: true }) },
    });
    const deploymentId = await redeploy(service.serviceId);
    const deployment = await waitForDeployment(db, deploymentId, 150_000);
    const log = (await deploymentLog(db, deploymentId)).join('\n');
    expect(deployment.status, log).toBe('failed');
    expect(deployment.error ?? log).toMatch(/rolled back|tasks failed/);
    const [swarmService] = await swarmServicesOf(service.serviceId);
    expect(swarmService?.Spec?.Labels?.[DEPLOYMENT_LABEL]).toBe(first);
    await waitFor('the previous release to answer', async () => (await viaCaddy(host)).status === 200);
    expect(await viaCaddy(host)).toEqual({ status: 200, body: 'hello from busybox\n' });
  });

  it('a release that crashes before it ran RELEASE_STABILIZATION_MS never takes traffic: a standby of the previous one answers until the rollback runs', async () => {
    // Runs (no healthcheck: at once), so Swarm stops the old task; exits 1 s later, within the 2 s
    // stabilisation window and the 2.2 s monitor (stabilization + drain), so Swarm rolls back and
    // must start the previous release again from nothing.
    await db.service.update({
      where: { id: service.serviceId },
      data: { compose: compose({ command: 'httpd -p 8080 -h /www; sleep 1; exit 3' }) },
    });
    const watching = visitor(host);
    const deploymentId = await redeploy(service.serviceId);
    const deployment = await waitForDeployment(db, deploymentId, 150_000);
    const seen = await watching.stop();
    const log = (await deploymentLog(db, deploymentId)).join('\n');
    // Never routed, as on the single engine, which holds a new set back for the same window: the
    // release failed, it was not rolled back after a switch.
    expect(deployment.status, log).toBe('failed');
    expect(log).toMatch(/Standby of the serving release runs \(hostctl-[0-9a-f]{12}--standby\)/);
    // No request reached the task that died: the standby answered while Swarm replaced the old
    // task (without it, 21 of 51 failed), and the new task was never sent any (before the window,
    // the request in flight on it when it died failed, seen once in 3 runs).
    expect(seen.failures, seen.failures.join('; ')).toEqual([]);
    expect(seen.answers).toBeGreaterThan(5);
    // The standby goes with the deployment; the previous release runs again in the web component.
    const left = await allSwarmServicesOf(service.serviceId);
    expect(left.map((item) => item.Spec?.Labels?.[DEPLOYMENT_LABEL])).toEqual([first]);
    expect(left.map((item) => item.Spec?.Name)).toEqual([expect.stringMatching(/-web$/)]);
    expect(await viaCaddy(host)).toEqual({ status: 200, body: 'hello from busybox\n' });
  });

  it('a deployment cancelled while Swarm updates is rolled back: the previous release keeps answering', async () => {
    // Never healthy: the new task stays "starting", so the update is still running when cancelled.
    await db.service.update({
      where: { id: service.serviceId },
      data: {
        compose:
          compose() +
          '    healthcheck:\n      test: ["CMD", "false"]\n      interval: 1s\n      retries: 100\n',
      },
    });
    const deploymentId = await redeploy(service.serviceId);
    await waitFor(
      'Swarm to be updating',
      async () => {
        const [swarmService] = await swarmServicesOf(service.serviceId);
        return swarmService?.Spec?.Labels?.[DEPLOYMENT_LABEL] === deploymentId;
      },
      60_000,
    );
    expect(await createDeploymentsStore(db).cancel(deploymentId, { mayChangeDefinition: true })).toEqual({
      cancelled: true,
    });
    // The cancel is final in PostgreSQL at once; the worker notices it and undoes the update.
    const rolledBack = await waitFor(
      'Swarm to roll the cancelled update back',
      async () => {
        const [swarmService] = await swarmServicesOf(service.serviceId);
        return swarmService?.UpdateStatus?.State === 'rollback_completed' && swarmService;
      },
      60_000,
    );
    expect(rolledBack.Spec?.Labels?.[DEPLOYMENT_LABEL]).toBe(first);
    expect((await db.deployment.findUniqueOrThrow({ where: { id: deploymentId } })).status).toBe('cancelled');
    expect((await deploymentLog(db, deploymentId)).join('\n')).toMatch(
      /Rolling hostctl-[0-9a-f]{12}-web back to the previous release/,
    );
    await waitFor('the previous release to answer', async () => (await viaCaddy(host)).status === 200);
    await db.service.update({ where: { id: service.serviceId }, data: { compose: compose() } });
  });

  it('two replicas: the route lists both tasks and requests through it answer', async () => {
    await db.service.update({
      where: { id: service.serviceId },
      data: { compose: compose({ replicas: 2 }) },
    });
    const deploymentId = await redeploy(service.serviceId);
    const deployment = await waitForDeployment(db, deploymentId, 120_000);
    const log = (await deploymentLog(db, deploymentId)).join('\n');
    expect(deployment.status, log).toBe('succeeded');
    expect(log).toMatch(/Routing http:\/\/svc-[^ ]+ to 127\.0\.0\.1:\d+, 127\.0\.0\.1:\d+$/m);
    expect(await runningTasks(service.serviceId)).toHaveLength(2);
    for (let i = 0; i < 10; i += 1) expect((await viaCaddy(host)).status).toBe(200);
  });

  it('stop scales the Swarm service to zero; start and restart run new tasks the route follows', async () => {
    expect(await lifecycle(service.serviceId, 'stop')).toEqual({
      status: 'stopped',
      message: 'Service stopped',
    });
    expect(await runningTasks(service.serviceId)).toEqual([]);
    const [stopped] = await swarmServicesOf(service.serviceId);
    expect(stopped?.Spec?.Mode?.Replicated?.Replicas).toBe(0);
    expect((await viaCaddy(host)).status).toBe(502);

    expect(await lifecycle(service.serviceId, 'start')).toEqual({
      status: 'running',
      message: 'Service started',
    });
    expect(await viaCaddy(host)).toEqual({ status: 200, body: 'hello from busybox\n' });
    const before = await runningTasks(service.serviceId);
    expect(before).toHaveLength(2);

    expect(await lifecycle(service.serviceId, 'restart')).toEqual({
      status: 'running',
      message: 'Service restarted',
    });
    const after = await runningTasks(service.serviceId);
    expect(after).toHaveLength(2);
    expect(after.filter((id) => before.includes(id))).toEqual([]);
    expect(await viaCaddy(host)).toEqual({ status: 200, body: 'hello from busybox\n' });
  });

  it('a redeploy of a stopped service holds no standby: nothing serves that it could stand in for', async () => {
    expect(await lifecycle(service.serviceId, 'stop')).toMatchObject({ status: 'stopped' });
    const deploymentId = await redeploy(service.serviceId);
    const deployment = await waitForDeployment(db, deploymentId, 120_000);
    const log = (await deploymentLog(db, deploymentId)).join('\n');
    expect(deployment.status, log).toBe('succeeded');
    expect(log).not.toMatch(/Standby of the serving release runs/);
    expect(await allSwarmServicesOf(service.serviceId)).toHaveLength(1);
    expect(await viaCaddy(host)).toEqual({ status: 200, body: 'hello from busybox\n' });
  });

  it('delete removes the Swarm service, its network and its route', async () => {
    await db.service.update({ where: { id: service.serviceId }, data: { deletedAt: new Date() } });
    await app.producer.enqueue('delete', { serviceId: service.serviceId });
    await waitFor(
      'the service to be purged',
      async () => (await db.service.findUniqueOrThrow({ where: { id: service.serviceId } })).purgedAt,
      60_000,
    );
    expect(await allSwarmServicesOf(service.serviceId)).toEqual([]);
    expect(
      await swarmEngine.listNetworks({ filters: { label: [`${SERVICE_LABEL}=${service.serviceId}`] } }),
    ).toEqual([]);
    expect((await viaCaddy(host)).status).toBe(404);
  });
});
