// Cancels and worker crashes landing on each step of a cutover: the previous release keeps
// serving, never more than two container sets exist, and exactly one is left at the end.
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdvisoryLocks, createWorkerDeploymentStore, createWorkerServiceStore } from '@hostctl/db';
import { SimulatedCrash, createReleaseHarness, type ReleaseHarness } from '../testing/release-harness.js';
import { TEST_DATABASE_URL, TEST_IMAGE } from '../testing/test-env.js';
import { removeStraySetsOfServices } from './stray-sets.js';

const compose = `services:
  web:
    image: ${TEST_IMAGE}
    ports: ["8080"]
`;
const withVolume = `services:
  web:
    image: ${TEST_IMAGE}
    ports: ["8080"]
    volumes: ["data:/data"]
volumes:
  data: {}
`;
const START_FIRST_STEPS = [
  'validate',
  'pull',
  'network',
  'volumes',
  'create',
  'start',
  'verify',
  'stabilize',
  'route',
  'drain',
];

let h: ReleaseHarness;
beforeAll(() => {
  h = createReleaseHarness({ stabilizationMs: 300, drainMs: 300 });
});
afterAll(() => h.close());

async function runningService(text = compose) {
  const service = await h.deploy(text);
  expect(await h.run(service.deploymentId)).toEqual({ status: 'succeeded' });
  return service;
}

async function expectPreviousServing(serviceId: string, previous: string) {
  const web = await h.webOf(serviceId, previous);
  expect(web?.isRunning).toBe(true);
  expect(h.routes.get(serviceId)?.targets[0]?.host).toBe(web!.ip);
  expect(await h.setsOf(serviceId)).toEqual(new Set([previous]));
  expect((await h.db.service.findUniqueOrThrow({ where: { id: serviceId } })).status).toBe('running');
}

describe('cancel by request', () => {
  it.each(START_FIRST_STEPS)('at %s: the new set goes, the previous release keeps serving', async (step) => {
    const service = await runningService();
    const redeploy = await h.redeploy(service.serviceId);
    h.at(step, 'before', async (id) => {
      expect(await h.cancelAsApi(id)).toBe(true);
    });
    expect(await h.run(redeploy)).toEqual({ status: 'cancelled' });

    expect(await h.db.deployment.findUniqueOrThrow({ where: { id: redeploy } })).toMatchObject({
      status: 'cancelled',
      error: 'cancelled by request',
    });
    await expectPreviousServing(service.serviceId, service.deploymentId);
    expect(await h.logOf(redeploy)).toMatch(/Deployment cancelled \(cancelled by request\)/);
  });

  it('at stop_previous (stop-first): the stopped release is started again', async () => {
    const service = await runningService(withVolume);
    const redeploy = await h.redeploy(service.serviceId);
    h.at('create', 'before', async (id) => {
      expect(await h.cancelAsApi(id)).toBe(true);
    });
    expect(await h.run(redeploy)).toEqual({ status: 'cancelled' });
    await expectPreviousServing(service.serviceId, service.deploymentId);
  });

  it('is refused once the deployment is at retire, which then completes', async () => {
    const service = await runningService();
    const redeploy = await h.redeploy(service.serviceId);
    let refused: boolean | undefined;
    h.at('retire', 'after', async (id) => {
      refused = !(await h.cancelAsApi(id));
    });
    expect(await h.run(redeploy)).toEqual({ status: 'succeeded' });
    expect(refused).toBe(true);
    expect(await h.setsOf(service.serviceId)).toEqual(new Set([redeploy]));
  });

  it('while waiting in the stabilisation window: the poll aborts the wait', async () => {
    const slow = createReleaseHarness({ stabilizationMs: 60_000, drainMs: 0 });
    try {
      // A first deploy is not held back (nothing serves that the window would protect): the
      // window is a redeploy's.
      const service = await slow.deploy(compose);
      expect(await slow.run(service.deploymentId)).toEqual({ status: 'succeeded' });
      const redeploy = await slow.redeploy(service.serviceId);
      slow.at('stabilize', 'after', async (id) => {
        // Not through setStep: the one-second status poll must notice and abort the wait.
        setTimeout(() => void slow.cancelAsApi(id), 200);
      });
      expect(await slow.run(redeploy)).toEqual({ status: 'cancelled' });
      expect(await slow.setsOf(service.serviceId)).toEqual(new Set([service.deploymentId]));
      // The previous release never stopped serving.
      expect((await slow.db.service.findUniqueOrThrow({ where: { id: service.serviceId } })).status).toBe(
        'running',
      );
    } finally {
      await slow.close();
    }
  });
});

describe('cancel by delete', () => {
  it('says so in the log', async () => {
    const service = await runningService();
    const redeploy = await h.redeploy(service.serviceId);
    h.at('verify', 'before', async () => {
      await h.db.service.update({ where: { id: service.serviceId }, data: { deletedAt: new Date() } });
      await createWorkerDeploymentStore(h.db).cancelInFlight(service.serviceId);
    });
    expect(await h.run(redeploy)).toEqual({ status: 'cancelled' });
    expect(await h.logOf(redeploy)).toMatch(/Deployment cancelled \(the service is being deleted\)/);
  });
});

describe('a worker crash at each step', () => {
  it.each([...START_FIRST_STEPS, 'retire'])(
    'at %s: the retried job resumes and ends with one set',
    async (step) => {
      const service = await runningService();
      const redeploy = await h.redeploy(service.serviceId);
      let setsAtCrash = 0;
      h.at(step, 'after', async () => {
        setsAtCrash = (await h.setsOf(service.serviceId)).size;
        throw new SimulatedCrash(step);
      });
      expect(await h.run(redeploy, 1)).toBeInstanceOf(SimulatedCrash);
      expect(setsAtCrash).toBeLessThanOrEqual(2);
      expect((await h.setsOf(service.serviceId)).size).toBeLessThanOrEqual(2);
      // The previous release serves until the switch: nothing of it was touched before `route`.
      if (START_FIRST_STEPS.indexOf(step) < START_FIRST_STEPS.indexOf('route'))
        expect((await h.webOf(service.serviceId, service.deploymentId))?.isRunning).toBe(true);

      expect(await h.run(redeploy, 2)).toEqual({ status: 'succeeded' });
      expect(await h.setsOf(service.serviceId)).toEqual(new Set([redeploy]));
      const web = await h.webOf(service.serviceId, redeploy);
      expect(h.routes.get(service.serviceId)?.targets[0]?.host).toBe(web!.ip);
    },
  );
});

describe('a deployment interrupted after its switch', () => {
  it('resumes its window even when a newer deployment waits; the newer one then replaces it', async () => {
    const service = await runningService();
    const interrupted = await h.redeploy(service.serviceId);
    h.at('drain', 'after', async () => {
      throw new SimulatedCrash('drain');
    });
    await h.run(interrupted, 1);
    const switchedTo = (await h.webOf(service.serviceId, interrupted))!.ip;
    expect(h.routes.get(service.serviceId)?.targets[0]?.host).toBe(switchedTo);

    const newer = await h.redeploy(service.serviceId);
    // It serves already: it is finished, not superseded (a superseded one would leave the route
    // to whoever removes its set).
    expect(await h.run(interrupted, 2)).toEqual({ status: 'succeeded' });
    expect(await h.setsOf(service.serviceId)).toEqual(new Set([interrupted]));
    expect(await h.run(newer)).toEqual({ status: 'succeeded' });
    expect(await h.setsOf(service.serviceId)).toEqual(new Set([newer]));
    const web = await h.webOf(service.serviceId, newer);
    expect(h.routes.get(service.serviceId)?.targets[0]?.host).toBe(web!.ip);
  });
});

describe('the reconciler and leftover sets', () => {
  it('removes a set of neither the current release nor a deployment in flight, once the lock is free', async () => {
    const service = await runningService();
    const redeploy = await h.redeploy(service.serviceId);
    h.at('verify', 'after', async () => {
      throw new SimulatedCrash('verify');
    });
    await h.run(redeploy, 1);
    expect((await h.setsOf(service.serviceId)).size).toBe(2);
    const locks = createAdvisoryLocks({ url: TEST_DATABASE_URL, max: 2 });
    const deps = {
      runtime: h.runtime,
      locks,
      deployments: createWorkerDeploymentStore(h.db),
      services: createWorkerServiceStore(h.db),
      instance: h.instance,
      logger: pino({ level: 'silent' }),
    };
    try {
      // In flight: its set is a cutover's second set, not a stray.
      expect(await removeStraySetsOfServices(deps)).toBe(0);
      // Abandoned (its job is gone for good): its set is a leftover.
      await h.db.deployment.update({ where: { id: redeploy }, data: { status: 'failed' } });
      const held = await locks.tryAcquire(service.serviceId);
      expect(await removeStraySetsOfServices(deps)).toBe(0);
      await held?.release();
      expect(await removeStraySetsOfServices(deps)).toBe(1);
      expect(await h.setsOf(service.serviceId)).toEqual(new Set([service.deploymentId]));
      expect(
        h.runtime.objects().networks.filter((name) => name.endsWith(redeploy.replace(/-/g, '').slice(0, 8))),
      ).toEqual([]);
    } finally {
      await locks.close();
    }
  });
});
