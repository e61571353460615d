// The deploy, lifecycle and delete processors end to end through real BullMQ, PostgreSQL and the
// worker app as production wires it, with the fake runtime instead of an engine: the pipeline's
// logic in seconds. The same runtime promises are checked against Docker by the contract suite.
import { COMPONENT_LABEL, SERVICE_LABEL, dockerNamePrefix } from '@hostctl/domain';
import type { LifecycleResult } from '@hostctl/queue';
import { describe, expect, it } from 'vitest';
import { noopRouter } from './adapters/router.js';
import { connects } from './health/port-probe.js';
import { serviceObjects } from './pipeline/service-objects.js';
import { createFakeRuntime } from './testing/fake-runtime.js';
import { createRedeployment, waitFor, waitForDeployment, type CreatedService } from './testing/fixtures.js';
import { deploymentLog } from './testing/repository-fixtures.js';
import { TEST_IMAGE } from './testing/test-env.js';
import { useWorkerApp } from './testing/worker-fixture.js';

const fixture = useWorkerApp('logic', {
  runtime: createFakeRuntime({ images: [TEST_IMAGE] }),
  app: { router: noopRouter, observe: false, readiness: { timeoutMs: 5000, stableMs: 200 } },
  operationEvents: true,
  // The single engine's warning for placement needs a placement the policy lets through.
  env: { SWARM_PLACEMENT_ALLOWED: 'node.role' },
});
const { prefix, db, runtime, app, operationEvents: queueEvents } = fixture;

const compose = (webEnvironment = '') => `services:
  web:
    image: ${TEST_IMAGE}
    ports: ["8080"]
    volumes: ["data:/data"]${webEnvironment}
  sidecar:
    image: ${TEST_IMAGE}
    command: ["sleep", "3600"]
volumes:
  data: {}
`;

const containersOf = (serviceId: string) => runtime.listContainers({ [SERVICE_LABEL]: serviceId });

const deploy = (composeText: string): Promise<CreatedService> => fixture.deploy({ compose: composeText });

async function lifecycle(serviceId: string, action: 'start' | 'stop' | 'restart'): Promise<LifecycleResult> {
  const job = await app.producer.enqueue('lifecycle', { serviceId, action });
  return (await job.waitUntilFinished(queueEvents, 30_000)) as LifecycleResult;
}

describe('worker logic on the fake runtime', () => {
  let service: CreatedService;

  it('deploys a two-container service that serves on its web address', async () => {
    service = await deploy(compose());
    expect(await waitForDeployment(db, service.deploymentId, 30_000)).toMatchObject({ status: 'succeeded' });
    const containers = await containersOf(service.serviceId);
    expect(containers.map((c) => c.labels[COMPONENT_LABEL]).sort()).toEqual(['sidecar', 'web']);
    expect(containers.every((c) => c.state === 'running')).toBe(true);
    const web = await runtime.inspectContainer(
      containers.find((c) => c.labels[COMPONENT_LABEL] === 'web')!.id,
    );
    expect(await connects(web!.ip!, 8080, 1000)).toBe(true);
    expect((await db.service.findUniqueOrThrow({ where: { id: service.serviceId } })).status).toBe('running');
  });

  it('replaces the container set on a redeploy', async () => {
    const before = (await containersOf(service.serviceId)).map((c) => c.id);
    const redeployment = await createRedeployment(db, service.serviceId);
    await app.producer.enqueue('deploy', { deploymentId: redeployment });
    expect(await waitForDeployment(db, redeployment, 30_000)).toMatchObject({ status: 'succeeded' });
    const after = await containersOf(service.serviceId);
    expect(after).toHaveLength(2);
    expect(after.some((c) => before.includes(c.id))).toBe(false);
  });

  it('stops and starts a service, and restarts one whose web container crashed', async () => {
    expect(await lifecycle(service.serviceId, 'stop')).toMatchObject({ status: 'stopped' });
    expect((await containersOf(service.serviceId)).every((c) => c.state !== 'running')).toBe(true);
    expect(await lifecycle(service.serviceId, 'start')).toMatchObject({ status: 'running' });

    const web = (await containersOf(service.serviceId)).find((c) => c.labels[COMPONENT_LABEL] === 'web')!;
    await runtime.exit(web.id, 137, 'killed');
    expect(await lifecycle(service.serviceId, 'restart')).toMatchObject({ status: 'running' });
    expect((await runtime.inspectContainer(web.id))?.isRunning).toBe(true);
  });

  it('runs one container for deploy.replicas on a single engine, and says so on the deployment', async () => {
    const swarmOnly = await deploy(
      `services:\n  web:\n    image: ${TEST_IMAGE}\n    ports: ["8080"]\n    deploy:\n      replicas: 3\n` +
        `      placement: {constraints: ["node.role == worker"]}\n`,
    );
    expect(await waitForDeployment(db, swarmOnly.deploymentId, 30_000)).toMatchObject({
      status: 'succeeded',
      warnings: [
        'services.web.deploy.replicas: one engine runs one container per component; 3 asked',
        'services.web.deploy.placement: ignored on a single engine',
      ],
    });
    expect(await containersOf(swarmOnly.serviceId)).toHaveLength(1);
    const log = (await deploymentLog(db, swarmOnly.deploymentId)).join('\n');
    expect(log).toContain(
      'Warning: services.web.deploy.replicas: one engine runs one container per component; 3 asked',
    );
    expect(log).toContain('Warning: services.web.deploy.placement: ignored on a single engine');
  });

  it('fails a deployment whose container exits at start, with its exit code and output', async () => {
    const crashing = await deploy(compose(`\n    environment: {FAKE_EXIT_CODE: "3"}`));
    const deployment = await waitForDeployment(db, crashing.deploymentId, 30_000);
    expect(deployment.status).toBe('failed');
    expect(deployment.error).toMatch(/exit code 3/);
    expect(deployment.error).toMatch(/the process exited at start/);
    expect((await db.service.findUniqueOrThrow({ where: { id: crashing.serviceId } })).status).toBe('failed');
  });

  it('deletes a service and leaves none of its objects behind', async () => {
    // As the API does: the row is marked deleted first; the worker refuses to purge a live service.
    await db.service.update({ where: { id: service.serviceId }, data: { deletedAt: new Date() } });
    await app.producer.enqueue('delete', { serviceId: service.serviceId });
    await waitFor(
      'containers removed',
      async () => (await containersOf(service.serviceId)).length === 0,
      30_000,
    );
    const objects = serviceObjects(service.serviceId, prefix);
    const servicePrefix = dockerNamePrefix(service.serviceId);
    const left = runtime.objects();
    expect(left.networks.filter((name) => name.startsWith(servicePrefix))).toEqual([]);
    expect(left.volumes).not.toContain(objects.volume('data'));
    expect(left.containers.filter((name) => name.startsWith(servicePrefix))).toEqual([]);
  });
});
