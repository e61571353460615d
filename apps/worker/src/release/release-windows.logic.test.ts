// Windows that end on evidence (issue 29): a release that keeps passing its checks takes traffic
// without waiting out the longest window, and the previous release is retired once the proxy has
// no request in flight to it, never while one is. The longest windows here are a minute, far past
// the harness's 30 s deploy timeout: a deployment that waited one out would time out and fail.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RouteTarget } from '../adapters/router.js';
import { createReleaseHarness, type ReleaseHarness } from '../testing/release-harness.js';
import { TEST_IMAGE } from '../testing/test-env.js';

const checked = (extra = '') => `services:
  web:
    image: ${TEST_IMAGE}
    ports: ["8080"]
    healthcheck: {test: ["CMD", "true"], interval: 100ms, timeout: 1s, retries: 1}${extra}
`;
const unchecked = `services:
  web:
    image: ${TEST_IMAGE}
    ports: ["8080"]
`;

const MINUTE = 60_000;
let h: ReleaseHarness;
beforeAll(() => {
  h = createReleaseHarness({
    stabilizationMs: MINUTE,
    drainMs: MINUTE,
    evidence: { stabilizationMinMs: 200, drainMinMs: 200, healthPasses: 3 },
  });
});
afterAll(() => h.close());

async function running(compose: string) {
  const service = await h.deploy(compose);
  expect(await h.run(service.deploymentId)).toEqual({ status: 'succeeded' });
  const first = await h.webOf(service.serviceId, service.deploymentId);
  return { ...service, firstIp: first!.ip! };
}

const stepOf = async (id: string) => (await h.db.deployment.findUniqueOrThrow({ where: { id } })).step;

describe('release windows that end on evidence', () => {
  it('switches once the health check passed the configured number of times, not after the longest window', async () => {
    const service = await running(checked());
    const redeploy = await h.redeploy(service.serviceId);
    expect(await h.run(redeploy)).toEqual({ status: 'succeeded' });
    const log = await h.logOf(redeploy);
    expect(log).toMatch(/before it receives traffic \(at least 200 ms, at most 60000 ms\)/);
    expect(log).toMatch(/The new release held after [\d.]+ s: every check passed/);
    expect(log).toMatch(/Drained after [\d.]+ s: every check passed/);
    expect(await h.setsOf(service.serviceId)).toEqual(new Set([redeploy]));
  });

  it('retires the previous release only once the proxy has no request in flight to it', async () => {
    const service = await running(unchecked);
    const redeploy = await h.redeploy(service.serviceId);
    let inFlight = 2;
    const asked: RouteTarget[][] = [];
    h.proxy.inFlight = async (targets) => {
      asked.push(targets);
      return inFlight;
    };
    const outcome = h.run(redeploy);
    // The drain holds while requests to the previous release are running…
    while ((await stepOf(redeploy)) !== 'drain') await sleep(50);
    await sleep(1000);
    expect(await stepOf(redeploy)).toBe('drain');
    expect(await h.setsOf(service.serviceId)).toEqual(new Set([service.deploymentId, redeploy]));
    inFlight = 0;
    // …and ends once they are over.
    expect(await outcome).toEqual({ status: 'succeeded' });
    expect(await h.setsOf(service.serviceId)).toEqual(new Set([redeploy]));
    expect(asked.every((targets) => targets.length === 1 && targets[0]!.host === service.firstIp)).toBe(true);
    // One switch, which kept the previous address known to the proxy (no second reload to forget it).
    const newIp = (await h.webOf(service.serviceId, redeploy))!.ip!;
    const routes = h.switches.filter((entry) => entry.route.serviceId === service.serviceId);
    expect(routes.at(-1)?.route).toEqual(
      expect.objectContaining({
        targets: [{ host: newIp, port: 8080 }],
        draining: [{ host: service.firstIp, port: 8080 }],
      }),
    );
    expect(routes.at(-2)?.route.targets).toEqual([{ host: service.firstIp, port: 8080 }]);
  });

  it('keeps draining, never rolls back, when the proxy cannot say what is in flight', async () => {
    const slow = createReleaseHarness({
      stabilizationMs: 300,
      drainMs: 1500,
      evidence: { stabilizationMinMs: 100, drainMinMs: 100, healthPasses: 1 },
    });
    try {
      const service = await slow.deploy(unchecked);
      expect(await slow.run(service.deploymentId)).toEqual({ status: 'succeeded' });
      slow.proxy.inFlight = async () => {
        throw new Error('Caddy admin API unreachable');
      };
      const redeploy = await slow.redeploy(service.serviceId);
      expect(await slow.run(redeploy)).toEqual({ status: 'succeeded' });
      expect(await slow.logOf(redeploy)).toMatch(/Drained after [\d.]+ s, its longest window/);
    } finally {
      await slow.close();
    }
  });

  it('still fails a release that exits inside its shortest window, before any traffic reaches it', async () => {
    const service = await running(checked());
    const redeploy = await h.redeploy(service.serviceId);
    h.at('stabilize', 'after', async (id) => {
      await h.runtime.exit((await h.webOf(service.serviceId, id))!.id, 2, 'boom');
    });
    await h.run(redeploy);
    const deployment = await h.db.deployment.findUniqueOrThrow({ where: { id: redeploy } });
    expect(deployment).toMatchObject({ status: 'failed', step: 'stabilize' });
    expect(deployment.error).toMatch(/web exited while stabilising \(exit code 2\)/);
    expect(await h.setsOf(service.serviceId)).toEqual(new Set([service.deploymentId]));
  });

  it('routes back to the previous release, still known to the proxy, when the new one fails while draining', async () => {
    const service = await running(unchecked);
    h.proxy.inFlight = async () => 1;
    const redeploy = await h.redeploy(service.serviceId);
    h.at('drain', 'after', async (id) => {
      await h.runtime.exit((await h.webOf(service.serviceId, id))!.id, 3, 'crash after cutover');
    });
    await h.run(redeploy);
    const deployment = await h.db.deployment.findUniqueOrThrow({ where: { id: redeploy } });
    expect(deployment).toMatchObject({ status: 'rolled_back', step: 'drain' });
    expect(h.routes.get(service.serviceId)).toMatchObject({
      targets: [{ host: service.firstIp, port: 8080 }],
    });
    expect(h.routes.get(service.serviceId)?.draining).toBeUndefined();
    expect(await h.setsOf(service.serviceId)).toEqual(new Set([service.deploymentId]));
  });
});
