// The start-first cutover and its failure outcomes, through the deploy processor on the fake
// runtime: which set serves, where the route points, what the deployment and service say.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReleaseHarness, type ReleaseHarness } from '../testing/release-harness.js';
import { TEST_IMAGE } from '../testing/test-env.js';

const web = (extra = '') => `services:
  web:
    image: ${TEST_IMAGE}
    ports: ["8080"]${extra}
  worker:
    image: ${TEST_IMAGE}
    command: ["sleep", "3600"]
`;
const withVolume = (extra = '') => `services:
  web:
    image: ${TEST_IMAGE}
    ports: ["8080"]
    volumes: ["data:/data"]${extra}
volumes:
  data: {}
`;

let h: ReleaseHarness;
beforeAll(() => {
  h = createReleaseHarness({ stabilizationMs: 1500, drainMs: 1500 });
});
afterAll(() => h.close());

/** A service whose first release succeeded: the release every redeploy below replaces. */
async function running(compose: string) {
  const service = await h.deploy(compose);
  expect(await h.run(service.deploymentId)).toEqual({ status: 'succeeded' });
  const first = await h.webOf(service.serviceId, service.deploymentId);
  return { ...service, firstIp: first!.ip! };
}

const deploymentOf = (id: string) => h.db.deployment.findUniqueOrThrow({ where: { id } });
const serviceOf = (id: string) => h.db.service.findUniqueOrThrow({ where: { id } });
const lastEvent = (serviceId: string) =>
  h.db.serviceEvent.findFirstOrThrow({ where: { serviceId }, orderBy: { id: 'desc' } });

describe('start-first cutover', () => {
  it('starts the new set beside the old one, switches traffic to it, then retires the old one', async () => {
    const service = await running(web());
    const redeploy = await h.redeploy(service.serviceId);
    let oldRunningAtStabilize = false;
    h.at('stabilize', 'after', async () => {
      oldRunningAtStabilize = (await h.webOf(service.serviceId, service.deploymentId))?.isRunning === true;
    });
    const before = h.switches.length;
    expect(await h.run(redeploy)).toEqual({ status: 'succeeded' });

    expect(oldRunningAtStabilize).toBe(true);
    const newWeb = await h.webOf(service.serviceId, redeploy);
    // One switch, made while both sets ran, to the new set's web container.
    expect(h.switches.slice(before)).toEqual([
      expect.objectContaining({
        sets: 2,
        route: expect.objectContaining({ targets: [{ host: newWeb!.ip, port: 8080 }] }),
      }),
    ]);
    expect(await h.setsOf(service.serviceId)).toEqual(new Set([redeploy]));
    expect(
      h.runtime.objects().networks.filter((name) => name.includes(service.deploymentId.slice(0, 8))),
    ).toEqual([]);
    const deployment = await deploymentOf(redeploy);
    expect(deployment).toMatchObject({
      status: 'succeeded',
      updateOrder: 'start-first',
      sourceCompose: web(),
      imageDigests: { web: expect.stringMatching(/^sha256:/), worker: expect.stringMatching(/^sha256:/) },
    });
    expect(await h.logOf(redeploy)).toMatch(/Update order start-first: no container mounts a volume/);
    expect(await lastEvent(service.serviceId)).toMatchObject({ type: 'redeploy', status: 'success' });
  });

  it('keeps the old release serving when the new one fails its health check', async () => {
    const service = await running(web());
    const failing = web(`
    environment: {FAKE_UNHEALTHY: "1"}
    healthcheck: {test: ["CMD", "true"], interval: 1s, retries: 1}`);
    const redeploy = await h.redeploy(service.serviceId, failing);
    const before = h.switches.length;
    await h.run(redeploy);

    expect(await deploymentOf(redeploy)).toMatchObject({ status: 'failed', step: 'verify' });
    expect((await deploymentOf(redeploy)).error).toMatch(/unhealthy/);
    expect(h.switches.length).toBe(before);
    expect(h.routes.get(service.serviceId)?.targets[0]?.host).toBe(service.firstIp);
    expect(await h.setsOf(service.serviceId)).toEqual(new Set([service.deploymentId]));
    expect((await serviceOf(service.serviceId)).status).toBe('running');
    expect(await lastEvent(service.serviceId)).toMatchObject({
      type: 'redeploy',
      status: 'failed',
      message: expect.stringContaining(`previous release ${service.deploymentId} kept`),
    });
  });

  it('fails a release that exits while it is being watched, before any traffic reaches it', async () => {
    const service = await running(web());
    const redeploy = await h.redeploy(service.serviceId);
    h.at('stabilize', 'after', async (id) => {
      await h.runtime.exit((await h.webOf(service.serviceId, id))!.id, 2, 'boom');
    });
    const before = h.switches.length;
    await h.run(redeploy);

    const deployment = await deploymentOf(redeploy);
    expect(deployment).toMatchObject({ status: 'failed', step: 'stabilize' });
    expect(deployment.error).toMatch(/web exited while stabilising \(exit code 2\)/);
    expect(h.switches.length).toBe(before);
    expect(await h.setsOf(service.serviceId)).toEqual(new Set([service.deploymentId]));
    expect((await serviceOf(service.serviceId)).status).toBe('running');
  });

  it('routes back to the old release and ends rolled_back when the new one fails while draining', async () => {
    const service = await running(web());
    const redeploy = await h.redeploy(service.serviceId);
    h.at('drain', 'after', async (id) => {
      await h.runtime.exit((await h.webOf(service.serviceId, id))!.id, 3, 'crash after cutover');
    });
    await h.run(redeploy);

    const deployment = await deploymentOf(redeploy);
    expect(deployment).toMatchObject({ status: 'rolled_back', step: 'drain' });
    expect(deployment.error).toMatch(/exited after the switch/);
    expect(h.routes.get(service.serviceId)?.targets[0]?.host).toBe(service.firstIp);
    expect(await h.setsOf(service.serviceId)).toEqual(new Set([service.deploymentId]));
    expect((await h.webOf(service.serviceId, service.deploymentId))?.isRunning).toBe(true);
    expect((await serviceOf(service.serviceId)).status).toBe('running');
    expect(await lastEvent(service.serviceId)).toMatchObject({ type: 'redeploy', status: 'rolled_back' });
  });

  it('routes a first deploy as soon as it is verified: no window holds back the only release', async () => {
    const service = await h.deploy(web());
    const before = h.switches.length;
    expect(await h.run(service.deploymentId)).toEqual({ status: 'succeeded' });

    const newWeb = await h.webOf(service.serviceId, service.deploymentId);
    expect(h.switches.slice(before)).toEqual([
      expect.objectContaining({
        route: expect.objectContaining({ targets: [{ host: newWeb!.ip, port: 8080 }] }),
      }),
    ]);
    const logs = await h.db.deploymentLog.findMany({ where: { deploymentId: service.deploymentId } });
    expect(logs.map((line) => line.message)).toContainEqual(
      expect.stringContaining('nothing to cut over from'),
    );
    expect(logs.map((line) => line.message)).not.toContainEqual(
      expect.stringContaining('Watching the new release'),
    );
  });

  it('has nothing to cut over from on a first deploy: a failure leaves the service failed', async () => {
    const service = await h.deploy(web(`\n    environment: {FAKE_EXIT_CODE: "4"}`));
    await h.run(service.deploymentId);
    expect(await deploymentOf(service.deploymentId)).toMatchObject({ status: 'failed' });
    expect((await serviceOf(service.serviceId)).status).toBe('failed');
    expect(await h.setsOf(service.serviceId)).toEqual(new Set());
  });
});

describe('stop-first', () => {
  it('goes stop-first for a volume: the old set is stopped before the new one is created', async () => {
    const service = await running(withVolume());
    const redeploy = await h.redeploy(service.serviceId);
    let oldRunningAtCreate: boolean | undefined;
    h.at('create', 'after', async () => {
      oldRunningAtCreate = (await h.webOf(service.serviceId, service.deploymentId))?.isRunning;
    });
    expect(await h.run(redeploy)).toEqual({ status: 'succeeded' });
    expect(oldRunningAtCreate).toBe(false);
    expect(await deploymentOf(redeploy)).toMatchObject({ updateOrder: 'stop-first' });
    expect(await h.logOf(redeploy)).toMatch(/Update order stop-first: web mounts a volume/);
    expect(await h.setsOf(service.serviceId)).toEqual(new Set([redeploy]));
  });

  it('starts the old set again and routes to it when the new release fails', async () => {
    const service = await running(withVolume());
    const redeploy = await h.redeploy(
      service.serviceId,
      withVolume(`\n    environment: {FAKE_EXIT_CODE: "5"}`),
    );
    await h.run(redeploy);

    expect(await deploymentOf(redeploy)).toMatchObject({ status: 'failed', updateOrder: 'stop-first' });
    const old = await h.webOf(service.serviceId, service.deploymentId);
    expect(old?.isRunning).toBe(true);
    expect(h.routes.get(service.serviceId)?.targets[0]?.host).toBe(old!.ip);
    expect(await h.setsOf(service.serviceId)).toEqual(new Set([service.deploymentId]));
    expect(await h.logOf(redeploy)).toMatch(/Starting the previous release .* again/);
    expect((await serviceOf(service.serviceId)).status).toBe('running');
  });

  it('routes to the new release without holding it back, then rolls back when it fails after the switch', async () => {
    const service = await running(withVolume());
    const redeploy = await h.redeploy(service.serviceId);
    let routedBeforeWatch: string | undefined;
    h.at('drain', 'after', async (id) => {
      routedBeforeWatch = h.routes.get(service.serviceId)?.targets[0]?.host;
      await h.runtime.exit((await h.webOf(service.serviceId, id))!.id, 3, 'boom');
    });
    await h.run(redeploy);

    const log = await h.logOf(redeploy);
    // With the previous release stopped, a wait before the switch would only lengthen the gap.
    expect(log).not.toMatch(/before it receives traffic/);
    expect(log).toMatch(/after the switch; the stopped previous release is kept/);
    expect(routedBeforeWatch).toBeDefined();
    expect(routedBeforeWatch).not.toBe(service.firstIp);
    expect(await deploymentOf(redeploy)).toMatchObject({ status: 'rolled_back', updateOrder: 'stop-first' });
    const old = await h.webOf(service.serviceId, service.deploymentId);
    expect(old?.isRunning).toBe(true);
    expect(h.routes.get(service.serviceId)?.targets[0]?.host).toBe(old!.ip);
    expect(await h.setsOf(service.serviceId)).toEqual(new Set([service.deploymentId]));
  });

  it('goes start-first despite a volume when the compose asks for it', async () => {
    const compose = withVolume('\n    deploy: {update_config: {order: start-first}}');
    const service = await running(compose);
    const redeploy = await h.redeploy(service.serviceId);
    expect(await h.run(redeploy)).toEqual({ status: 'succeeded' });
    expect(await deploymentOf(redeploy)).toMatchObject({ updateOrder: 'start-first' });
    expect(await h.logOf(redeploy)).toMatch(/compose asks start-first for web despite the volume/);
  });
});
