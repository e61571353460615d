import Docker from 'dockerode';
import {
  COMPONENT_LABEL,
  DEPLOYMENT_LABEL,
  OWNER_LABEL,
  SERVICE_LABEL,
  INSTANCE_LABEL,
} from '@hostctl/domain';
import { createRedis, serviceLogStreamKey, type LifecycleResult } from '@hostctl/queue';
import { describe, expect, it } from 'vitest';
import {
  createComposeService,
  createRedeployment,
  httpGet,
  waitFor,
  waitForDeployment,
  type CreatedService,
} from './testing/fixtures.js';
import { TEST_REDIS_URL } from './testing/test-env.js';
import { useWorkerApp } from './testing/worker-fixture.js';

// End to end through a real BullMQ queue, a real worker, PostgreSQL and the Docker engine.
const {
  prefix,
  db,
  runtime,
  app,
  created,
  operationEvents: queueEvents,
} = useWorkerApp('deploy', {
  app: { readiness: { timeoutMs: 20_000, stableMs: 500 } },
  operationEvents: true,
});

const COMPOSE = `services:
  web:
    image: local/busybox:1
    ports: ["8080"]
    environment:
      GREETING: \${GREETING}
    volumes: ["data:/data"]
    depends_on: [sidecar]
    deploy: {resources: {limits: {memory: 64M, cpus: "0.5"}}}
  sidecar:
    image: local/busybox:1
    command: ["sleep", "3600"]
volumes:
  data: {}
`;

async function lifecycle(serviceId: string, action: 'start' | 'stop' | 'restart'): Promise<LifecycleResult> {
  const job = await app.producer.enqueue('lifecycle', { serviceId, action });
  return (await job.waitUntilFinished(queueEvents, 60_000)) as LifecycleResult;
}

async function containersOf(serviceId: string) {
  return runtime.listContainers({ [SERVICE_LABEL]: serviceId });
}

async function webAddress(serviceId: string): Promise<string> {
  const web = (await containersOf(serviceId)).find(
    (container) => container.labels[COMPONENT_LABEL] === 'web',
  );
  const state = web ? await runtime.inspectContainer(web.id) : null;
  if (!state?.ip) throw new Error('web container has no address');
  return state.ip;
}

describe('a compose service, end to end', () => {
  let service: CreatedService;

  it('deploys, runs and serves HTTP on its container address', async () => {
    service = await createComposeService(db, {
      compose: COMPOSE,
      variables: { GREETING: 'very-secret-greeting' },
    });
    created.push(service);
    await app.producer.enqueue('deploy', { deploymentId: service.deploymentId });
    const deployment = await waitForDeployment(db, service.deploymentId);
    expect(deployment).toMatchObject({ status: 'succeeded', error: null });
    expect(deployment.startedAt).toBeInstanceOf(Date);
    expect(deployment.imageDigest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(deployment.plan).toMatchObject({ web: { container: 'web', port: 8080 } });

    const row = await db.service.findUniqueOrThrow({ where: { id: service.serviceId } });
    // web's own limits plus the sidecar's defaults (CONTAINER_DEFAULT_MEMORY_MB 512, CPUS 1).
    expect(row).toMatchObject({ status: 'running', memoryLimitMb: 64 + 512, cpuLimit: 0.5 + 1 });
    expect(row.deployedAt).toBeInstanceOf(Date);
    // The source definition is kept so a redeploy applies changed variables; no secret lands in it.
    expect(row.compose).toBe(COMPOSE);
    expect(row.compose).not.toContain('very-secret-greeting');

    const containers = await containersOf(service.serviceId);
    expect(containers.map((container) => container.labels[COMPONENT_LABEL]).sort()).toEqual([
      'sidecar',
      'web',
    ]);
    for (const container of containers) {
      expect(container.state).toBe('running');
      expect(container.labels).toMatchObject({
        [OWNER_LABEL]: 'true',
        [DEPLOYMENT_LABEL]: service.deploymentId,
        [INSTANCE_LABEL]: prefix,
      });
    }
    expect((await runtime.listNetworks({ [SERVICE_LABEL]: service.serviceId })).length).toBe(1);
    expect(
      (await runtime.listVolumes({ [SERVICE_LABEL]: service.serviceId })).map((volume) => volume.name),
    ).toEqual([expect.stringMatching(/-data$/)]);

    // What a tenant can never change: no host ports, no privileges, an init, our limits.
    const web = containers.find((container) => container.labels[COMPONENT_LABEL] === 'web')!;
    const { HostConfig } = await new Docker({ socketPath: '/var/run/docker.sock' })
      .getContainer(web.id)
      .inspect();
    expect(HostConfig).toMatchObject({
      Init: true,
      Privileged: false,
      Memory: 64 * 1024 * 1024,
      NanoCpus: 500_000_000,
      SecurityOpt: ['no-new-privileges:true'],
    });
    expect(HostConfig.RestartPolicy?.Name).toBe('unless-stopped');
    expect(Object.keys(HostConfig.PortBindings ?? {})).toEqual([]);
    expect(HostConfig.Binds ?? []).toEqual([]);

    const response = await httpGet(await webAddress(service.serviceId), 8080);
    expect(response).toEqual({ status: 200, body: 'hello from busybox\n' });

    const events = await db.serviceEvent.findMany({
      where: { serviceId: service.serviceId },
      orderBy: { id: 'asc' },
    });
    expect(events.map((event) => `${event.type} ${event.status}`)).toEqual([
      'deploy started',
      'deploy success',
    ]);
    const logs = await db.deploymentLog.findMany({
      where: { deploymentId: service.deploymentId },
      orderBy: { seq: 'asc' },
    });
    expect(logs.map((log) => log.seq)).toEqual(logs.map((_, index) => index + 1));
    expect(logs.map((log) => log.message).join('\n')).not.toContain('very-secret-greeting');
  });

  it('stops, starts and restarts through the operations queue', async () => {
    expect(await lifecycle(service.serviceId, 'stop')).toEqual({
      status: 'stopped',
      message: 'Service stopped',
    });
    expect((await containersOf(service.serviceId)).every((container) => container.state === 'exited')).toBe(
      true,
    );
    expect((await db.service.findUniqueOrThrow({ where: { id: service.serviceId } })).status).toBe('stopped');

    expect(await lifecycle(service.serviceId, 'start')).toEqual({
      status: 'running',
      message: 'Service started',
    });
    expect((await httpGet(await webAddress(service.serviceId), 8080)).body).toBe('hello from busybox\n');

    const before = await containersOf(service.serviceId);
    expect(await lifecycle(service.serviceId, 'restart')).toEqual({
      status: 'running',
      message: 'Service restarted',
    });
    const after = await containersOf(service.serviceId);
    expect(after.map((container) => container.id).sort()).toEqual(
      before.map((container) => container.id).sort(),
    );
    expect(after.every((container) => container.state === 'running')).toBe(true);

    const events = await db.serviceEvent.findMany({
      where: { serviceId: service.serviceId },
      orderBy: { id: 'asc' },
    });
    expect(events.slice(-3).map((event) => `${event.type} ${event.status}`)).toEqual([
      'stop success',
      'start success',
      'restart success',
    ]);
  });

  it('redeploys by replacing the containers: never two sets for one service', async () => {
    const oldIds = (await containersOf(service.serviceId)).map((container) => container.id);
    const redeploymentId = await createRedeployment(db, service.serviceId);
    await app.producer.enqueue('deploy', { deploymentId: redeploymentId });
    const observed = new Set<number>();
    const watch = setInterval(() => {
      void containersOf(service.serviceId).then((list) =>
        observed.add(list.filter((container) => container.state === 'running').length),
      );
    }, 50);
    const deployment = await waitForDeployment(db, redeploymentId).finally(() => clearInterval(watch));
    expect(deployment.status).toBe('succeeded');
    const containers = await containersOf(service.serviceId);
    expect(containers).toHaveLength(2);
    expect(containers.every((container) => container.labels[DEPLOYMENT_LABEL] === redeploymentId)).toBe(true);
    expect(containers.some((container) => oldIds.includes(container.id))).toBe(false);
    expect(Math.max(...observed)).toBeLessThanOrEqual(2);
    const last = await db.serviceEvent.findFirstOrThrow({
      where: { serviceId: service.serviceId },
      orderBy: { id: 'desc' },
    });
    expect(`${last.type} ${last.status}`).toBe('redeploy success');
  });

  it('start recreates containers removed by hand from the last successful plan', async () => {
    for (const container of await containersOf(service.serviceId))
      await runtime.removeContainer(container.id);
    expect(await lifecycle(service.serviceId, 'start')).toEqual({
      status: 'running',
      message: 'Service started',
    });
    expect((await containersOf(service.serviceId)).length).toBe(2);
    expect((await httpGet(await webAddress(service.serviceId), 8080)).body).toBe('hello from busybox\n');
  });

  it('delete removes containers, network, volumes and the log stream, then marks the service purged', async () => {
    const logKey = serviceLogStreamKey(prefix, service.serviceId);
    const redis = createRedis(TEST_REDIS_URL, 'worker');
    await redis.xadd(logKey, '*', 'ts', new Date().toISOString(), 'stream', 'stdout', 'message', 'x');
    await db.service.update({ where: { id: service.serviceId }, data: { deletedAt: new Date() } });
    await app.producer.enqueue('delete', { serviceId: service.serviceId });
    const purged = await waitFor(
      'purge',
      async () => (await db.service.findUniqueOrThrow({ where: { id: service.serviceId } })).purgedAt,
    );
    expect(purged).toBeInstanceOf(Date);
    expect(await containersOf(service.serviceId)).toEqual([]);
    expect(await runtime.listNetworks({ [SERVICE_LABEL]: service.serviceId })).toEqual([]);
    expect(await runtime.listVolumes({ [SERVICE_LABEL]: service.serviceId })).toEqual([]);
    expect(await redis.exists(logKey)).toBe(0);
    await redis.quit();
  });
});
