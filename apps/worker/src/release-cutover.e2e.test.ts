import { COMPONENT_LABEL, DEPLOYMENT_LABEL, SERVICE_LABEL } from '@hostctl/domain';
import { describe, expect, it } from 'vitest';
import {
  createRedeployment,
  httpGet,
  waitFor,
  waitForDeployment,
  type CreatedService,
} from './testing/fixtures.js';
import { useWorkerApp } from './testing/worker-fixture.js';

// The start-first cutover on the Docker engine: the new set runs beside the old one on a network
// of its own, each answering as its own release, and a release that fails its health check is
// removed while the old one keeps answering.
const fixture = useWorkerApp('cutover', {
  // A fixed window (its shortest is its longest): the test looks at both sets while it lasts.
  env: { RELEASE_STABILIZATION_MS: '3000', RELEASE_STABILIZATION_MIN_MS: '3000', RELEASE_DRAIN_MS: '1000' },
  app: { readiness: { timeoutMs: 20_000, stableMs: 500 } },
});
const { db, runtime, app } = fixture;

const compose = (extra = '') => `services:
  web:
    image: local/busybox:1
    command: ["sh", "-c", "mkdir -p /tmp/www && echo $$VERSION > /tmp/www/index.html && exec httpd -f -p 8080 -h /tmp/www"]
    environment: {VERSION: "\${VERSION}"}
    ports: ["8080"]${extra}
`;

async function setsOf(serviceId: string) {
  const containers = await runtime.listContainers({ [SERVICE_LABEL]: serviceId });
  return new Set(containers.map((container) => container.labels[DEPLOYMENT_LABEL]));
}

async function webOf(serviceId: string, deploymentId: string) {
  const [web] = await runtime.listContainers({
    [SERVICE_LABEL]: serviceId,
    [DEPLOYMENT_LABEL]: deploymentId,
    [COMPONENT_LABEL]: 'web',
  });
  return web ? runtime.inspectContainer(web.id) : null;
}

async function answer(serviceId: string, deploymentId: string): Promise<string> {
  const web = await webOf(serviceId, deploymentId);
  if (!web?.ip) throw new Error(`the web container of ${deploymentId} has no address`);
  return (await httpGet(web.ip, 8080)).body.trim();
}

async function redeploy(serviceId: string, version: string, composeText = compose()): Promise<string> {
  await db.service.update({
    where: { id: serviceId },
    data: { compose: composeText, variables: { VERSION: version } },
  });
  const id = await createRedeployment(db, serviceId);
  await app.producer.enqueue('deploy', { deploymentId: id });
  return id;
}

describe('start-first cutover on Docker', () => {
  let service: CreatedService;

  it('runs the new release beside the old one, each on its own network, then retires the old one', async () => {
    service = await fixture.deploy({ compose: compose(), variables: { VERSION: 'v1' } });
    expect(await waitForDeployment(db, service.deploymentId)).toMatchObject({ status: 'succeeded' });
    expect(await answer(service.serviceId, service.deploymentId)).toBe('v1');

    const second = await redeploy(service.serviceId, 'v2');
    await waitFor('the new release to be stabilising', async () => {
      const row = await db.deployment.findUniqueOrThrow({ where: { id: second } });
      if (row.status !== 'queued' && row.status !== 'running')
        throw new Error(`the redeploy ended ${row.status} before stabilising: ${row.error}`);
      return row.step === 'stabilize';
    });
    // Both releases are up and each answers as itself; the old one was never stopped.
    expect(await setsOf(service.serviceId)).toEqual(new Set([service.deploymentId, second]));
    expect(await answer(service.serviceId, service.deploymentId)).toBe('v1');
    expect(await answer(service.serviceId, second)).toBe('v2');
    const networks = await runtime.listNetworks({ [SERVICE_LABEL]: service.serviceId });
    expect(networks).toHaveLength(2);
    expect(networks.every((network) => network.bridge?.startsWith('hct'))).toBe(true);

    expect(await waitForDeployment(db, second)).toMatchObject({
      status: 'succeeded',
      updateOrder: 'start-first',
    });
    expect(await setsOf(service.serviceId)).toEqual(new Set([second]));
    expect(await answer(service.serviceId, second)).toBe('v2');
    expect(await runtime.listNetworks({ [SERVICE_LABEL]: service.serviceId })).toHaveLength(1);
    service = { ...service, deploymentId: second };
  });

  it('removes a release that fails its health check and keeps the old one answering', async () => {
    const failing = compose(`
    healthcheck: {test: ["CMD", "false"], interval: 1s, timeout: 1s, retries: 1}`);
    const third = await redeploy(service.serviceId, 'v3', failing);
    const deployment = await waitForDeployment(db, third);
    expect(deployment).toMatchObject({ status: 'failed', step: 'verify' });
    expect(deployment.error).toMatch(/unhealthy/);

    expect(await setsOf(service.serviceId)).toEqual(new Set([service.deploymentId]));
    expect(await answer(service.serviceId, service.deploymentId)).toBe('v2');
    expect((await db.service.findUniqueOrThrow({ where: { id: service.serviceId } })).status).toBe('running');
    const event = await db.serviceEvent.findFirstOrThrow({
      where: { serviceId: service.serviceId },
      orderBy: { id: 'desc' },
    });
    expect(event.message).toContain(`previous release ${service.deploymentId} kept`);
  });

  it('rolls back to an earlier release: its definition and its image, pinned by id', async () => {
    const target = await db.deployment.findUniqueOrThrow({ where: { id: service.deploymentId } });
    const pinned = (target.imageDigests as Record<string, string>).web!;
    expect(pinned).toMatch(/^sha256:[a-f0-9]{64}$/);
    await redeploy(service.serviceId, 'v4');
    const latest = await db.deployment.findFirstOrThrow({
      where: { serviceId: service.serviceId },
      orderBy: { createdAt: 'desc' },
    });
    expect(await waitForDeployment(db, latest.id)).toMatchObject({ status: 'succeeded' });
    expect(await answer(service.serviceId, latest.id)).toBe('v4');

    // As the API's rollback: the service's definition back to the target's, then the deploy job.
    const rollback = await db.$transaction(async (tx) => {
      await tx.service.update({
        where: { id: service.serviceId },
        data: {
          status: 'deploying',
          compose: target.sourceCompose!,
          variables: target.sourceVariables as Record<string, string>,
        },
      });
      return tx.deployment.create({
        data: { serviceId: service.serviceId, trigger: 'rollback', rollbackOf: target.id },
      });
    });
    await app.producer.enqueue('deploy', { deploymentId: rollback.id });
    expect(await waitForDeployment(db, rollback.id)).toMatchObject({
      status: 'succeeded',
      imageDigests: { web: pinned },
    });
    expect(await answer(service.serviceId, rollback.id)).toBe('v2');
    expect(await setsOf(service.serviceId)).toEqual(new Set([rollback.id]));
  });
});
