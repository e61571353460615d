import { randomUUID } from 'node:crypto';
import { COMPONENT_LABEL, OWNER_LABEL, SERVICE_LABEL, INSTANCE_LABEL } from '@hostctl/domain';
import { createAdvisoryLocks, createWorkerServiceStore, createWorkerTelemetryStore } from '@hostctl/db';
import { afterAll, describe, expect, it } from 'vitest';
import { createDockerRuntime } from '../adapters/docker-runtime.js';
import { createDockerTelemetry } from '../adapters/docker-telemetry.js';
import { type ContainerSpec } from '../adapters/runtime.js';
import {
  createComposeService,
  createTestDb,
  deleteServiceRows,
  silentLogger,
  uniquePrefix,
  waitFor,
  type CreatedService,
} from '../testing/fixtures.js';
import { TEST_DATABASE_URL, TEST_IMAGE } from '../testing/test-env.js';
import { CRASH_LOOP_CHECKS, createHealthMonitor } from './health-monitor.js';
import { createLeadership } from './leadership.js';

// Real PostgreSQL and Docker: containers that serve, refuse, fail their check or crash-loop.
const prefix = uniquePrefix('health');
const db = createTestDb();
const locks = createAdvisoryLocks({ url: TEST_DATABASE_URL, max: 6 });
const socketPath = '/var/run/docker.sock';
const runtime = createDockerRuntime({ socketPath });
const leadership = createLeadership(locks, `hostctl:observers:${prefix}`);
const monitor = createHealthMonitor({
  store: createWorkerTelemetryStore(db),
  services: createWorkerServiceStore(db),
  runtime,
  telemetry: createDockerTelemetry({ socketPath }),
  locks,
  leadership,
  intervalMs: 15_000,
  logger: silentLogger,
});
const created: CreatedService[] = [];
const containers: string[] = [];

/** A running service whose last succeeded deployment publishes web:<port>, with one container. */
async function runningService(port: number, spec: Partial<ContainerSpec>): Promise<CreatedService> {
  const service = await createComposeService(db, {
    compose: `services:\n  web:\n    image: ${TEST_IMAGE}\n`,
  });
  created.push(service);
  await db.service.update({ where: { id: service.serviceId }, data: { status: 'running' } });
  await db.deployment.update({
    where: { id: service.deploymentId },
    data: { status: 'succeeded', plan: { containers: [], volumes: [], web: { container: 'web', port } } },
  });
  const id = await runtime.createContainer({
    name: `${prefix}-${randomUUID().slice(0, 8)}`,
    image: TEST_IMAGE,
    env: [],
    labels: {
      [OWNER_LABEL]: 'true',
      [INSTANCE_LABEL]: prefix,
      [SERVICE_LABEL]: service.serviceId,
      [COMPONENT_LABEL]: 'web',
    },
    exposedPorts: [port],
    init: true,
    restart: { name: 'no' },
    mounts: [],
    network: 'bridge',
    aliases: [],
    ...spec,
  });
  containers.push(id);
  await runtime.startContainer(id);
  return service;
}

const row = (service: CreatedService) => db.service.findUniqueOrThrow({ where: { id: service.serviceId } });
const events = (service: CreatedService, type: string) =>
  db.serviceEvent.findMany({ where: { serviceId: service.serviceId, type }, orderBy: { id: 'asc' } });

afterAll(async () => {
  for (const id of containers) await runtime.removeContainer(id);
  await deleteServiceRows(db, created);
  await leadership.release();
  await locks.close();
  await db.$disconnect();
});

describe('health monitor', () => {
  it('finds a serving web port healthy, records the check and one healthy event', async () => {
    const service = await runningService(8080, {});
    await waitFor('healthy', async () => {
      await monitor.runOnce();
      return (await row(service)).healthStatus === 'healthy';
    });
    await monitor.runOnce();
    const stored = await row(service);
    expect(stored).toMatchObject({ healthStatus: 'healthy', healthConsecutiveFailures: 0 });
    expect(Date.now() - stored.healthLastCheck!.getTime()).toBeLessThan(10_000);
    expect((await events(service, 'health')).map((e) => [e.status, e.message])).toEqual([
      ['healthy', 'Service is healthy: container web accepts connections on port 8080'],
    ]);
    // Sample does not count as a change of the service: the list's updated_at stays put.
    expect(stored.updatedAt.getTime()).toBeLessThan(stored.healthLastCheck!.getTime());
  });

  it('turns unhealthy after consecutive failures with an actionable event, then recovers', async () => {
    const service = await runningService(8080, {
      command: ['sh', '-c', 'sleep 4; httpd -f -p 8080 -h /www'],
    });
    await monitor.runOnce();
    expect(await row(service)).toMatchObject({ healthStatus: 'unknown', healthConsecutiveFailures: 1 });
    await monitor.runOnce();
    expect(await row(service)).toMatchObject({ healthStatus: 'unhealthy', healthConsecutiveFailures: 2 });
    await waitFor('recovery', async () => {
      await monitor.runOnce();
      return (await row(service)).healthStatus === 'healthy';
    });
    expect((await events(service, 'health')).map((e) => [e.status, e.message])).toEqual([
      [
        'unhealthy',
        'Service is unhealthy: container web does not accept connections on port 8080; check that the process listens on 0.0.0.0:8080',
      ],
      ['healthy', 'Service recovered: container web accepts connections on port 8080'],
    ]);
  });

  it("uses the container's own health check when it has one", async () => {
    const service = await runningService(8080, {
      healthcheck: {
        test: ['CMD', 'sh', '-c', 'echo db unreachable; exit 1'],
        intervalMs: 300,
        timeoutMs: 1000,
        retries: 1,
        startPeriodMs: 0,
      },
    });
    await waitFor(
      'docker to call it unhealthy',
      async () => (await runtime.inspectContainer(containers.at(-1)!))?.health === 'unhealthy',
    );
    await monitor.runOnce();
    await monitor.runOnce();
    expect((await row(service)).healthStatus).toBe('unhealthy');
    expect((await events(service, 'health'))[0]?.message).toBe(
      'Service is unhealthy: container web fails its health check (last output: db unreachable)',
    );
  });

  it('moves a crash-looping service to failed after a bound, once', async () => {
    const service = await runningService(8080, {
      command: ['sh', '-c', 'exit 3'],
      restart: { name: 'always' },
    });
    const id = containers.at(-1)!;
    // Docker's back-off grows with each restart: from here on the container is mostly waiting.
    await waitFor(
      'a crash loop',
      async () => ((await runtime.inspectContainer(id))?.restartCount ?? 0) >= 3,
      20_000,
    );
    for (let i = 0; i < CRASH_LOOP_CHECKS + 1; i++) await monitor.runOnce();
    expect((await row(service)).status).toBe('failed');
    expect((await events(service, 'status')).map((e) => [e.status, e.message])).toEqual([
      [
        'failed',
        expect.stringMatching(
          /^Service failed: container web keeps restarting \(last exit code 3\); its logs show why; it did not recover for \d+s\. Fix the cause, then start or redeploy it\.$/,
        ),
      ],
    ]);
    // Not running any more: its health goes back to unknown on the next sweep.
    await monitor.runOnce();
    expect(await row(service)).toMatchObject({ healthStatus: 'unknown', healthConsecutiveFailures: 0 });
  });

  it('runs on one replica at a time', async () => {
    const other = createLeadership(locks, `hostctl:observers:${prefix}`);
    expect(await leadership.isLeader()).toBe(true);
    expect(await other.isLeader()).toBe(false);
    await other.release();
  });
});
