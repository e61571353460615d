import { setTimeout as sleep } from 'node:timers/promises';
import { DelayedError, type Job } from 'bullmq';
import {
  createAdvisoryLocks,
  createWorkerDeploymentStore,
  createWorkerServiceStore,
  type Db,
} from '@hostctl/db';
import { COMPONENT_LABEL, DEPLOYMENT_LABEL, SERVICE_LABEL } from '@hostctl/domain';
import type { Route, RouteTarget, ServiceRouter } from '../adapters/router.js';
import { createDockerTelemetry } from '../adapters/docker-telemetry.js';
import { createDeployProcessor } from '../processors/deploy.processor.js';
import type { ReleaseEvidence } from '../release/release-windows.js';
import { createDockerDriver } from '../runtime/docker/docker-driver.js';
import { workerSourcePolicy } from '../sources/source-wiring.js';
import { createFakeRuntime, type FakeRuntime } from './fake-runtime.js';
import {
  createComposeService,
  createRedeployment,
  createTestDb,
  deleteServiceRows,
  silentLogger,
  testConfig,
  uniquePrefix,
  type CreatedService,
} from './fixtures.js';
import { TEST_DATABASE_URL, TEST_IMAGE } from './test-env.js';

/**
 * The deploy processor as the worker app wires it (real PostgreSQL stores and service locks), on
 * the fake runtime, called directly with a stand-in job so a test decides what happens at each
 * step: `at(step, action)` runs an action right before (`before`) or right after (`after`) the
 * step is recorded, which is how a cancel or a crash is made to land on exactly that step.
 */
export type StepHook = {
  step: string;
  when: 'before' | 'after';
  action: (deploymentId: string) => Promise<void>;
};

export class SimulatedCrash extends Error {
  constructor(step: string) {
    super(`simulated worker crash at step ${step}`);
  }
}

interface RecordedSwitch {
  route: Route;
  /** How many container sets the service had when the proxy was switched. */
  sets: number;
}

export function createReleaseHarness(settings: {
  stabilizationMs: number;
  drainMs: number;
  releasesKept?: number;
  /** The windows may end on evidence; the proxy then reports `inFlight` requests (below). */
  evidence?: ReleaseEvidence;
}) {
  const db: Db = createTestDb();
  const runtime: FakeRuntime = createFakeRuntime({ images: [TEST_IMAGE] });
  const instance = uniquePrefix('release');
  const config = testConfig(instance);
  const locks = createAdvisoryLocks({ url: TEST_DATABASE_URL, max: 4 });
  const store = createWorkerDeploymentStore(db);
  const hooks: StepHook[] = [];
  const switches: RecordedSwitch[] = [];
  const routes = new Map<string, Route>();
  const created: CreatedService[] = [];

  const setsOf = async (serviceId: string) =>
    new Set(
      (await runtime.listContainers({ [SERVICE_LABEL]: serviceId })).map((c) => c.labels[DEPLOYMENT_LABEL]),
    );

  // What the proxy answers when asked how many requests are in flight (evidence only).
  const proxy = { inFlight: async (_targets: RouteTarget[]): Promise<number> => 0 };
  const router: ServiceRouter = {
    async upsert(route) {
      switches.push({ route, sets: (await setsOf(route.serviceId)).size });
      routes.set(route.serviceId, route);
    },
    async remove(serviceId) {
      routes.delete(serviceId);
    },
    ...(settings.evidence ? { inFlight: (targets: RouteTarget[]) => proxy.inFlight(targets) } : {}),
  };
  // Each hook runs once: a release that pauses records its window's step again when it resumes.
  const runHooks = async (deploymentId: string, step: string, when: 'before' | 'after') => {
    for (const hook of hooks.filter((item) => item.step === step && item.when === when)) {
      hooks.splice(hooks.indexOf(hook), 1);
      await hook.action(deploymentId);
    }
  };
  const hooked = async (id: string, step: string, record: () => Promise<boolean>) => {
    await runHooks(id, step, 'before');
    const applied = await record();
    if (applied) await runHooks(id, step, 'after');
    return applied;
  };
  const deployments = {
    ...store,
    setStep: (id: string, step: string) => hooked(id, step, () => store.setStep(id, step)),
    enterWindow: (id: string, step: string, startedAt: Date) =>
      hooked(id, step, () => store.enterWindow(id, step, startedAt)),
  };
  // Run once each, right after the processor's next reads of the service (what it read is kept).
  const readHooks: ((serviceId: string) => Promise<void>)[] = [];
  const serviceStore = createWorkerServiceStore(db);
  const services = {
    async findById(id: string) {
      const found = await serviceStore.findById(id);
      await readHooks.shift()?.(id);
      return found;
    },
  };
  const processor = createDeployProcessor({
    deployments,
    services,
    locks,
    deployTimeoutMs: 30_000,
    customerShare: 64,
    releasesKept: settings.releasesKept ?? 5,
    logger: silentLogger,
    notify: () => undefined,
    pipeline: {
      runtime,
      driver: createDockerDriver({
        runtime,
        router,
        instance,
        readiness: { timeoutMs: 5000, stableMs: 200 },
        stabilizationMs: settings.stabilizationMs,
        drainMs: settings.drainMs,
        ...(settings.evidence ? { evidence: settings.evidence } : {}),
        // Never read by a deploy (only the observers read it); a client, no connection.
        telemetry: createDockerTelemetry({ socketPath: '/var/run/docker.sock' }),
      }),
      images: { policy: workerSourcePolicy(config).imagePolicy },
    },
  });

  return {
    db,
    runtime,
    instance,
    routes,
    switches,
    /** Replace `inFlight` to play the proxy's count of requests in flight. */
    proxy,
    hooks,
    setsOf,
    at(step: string, when: StepHook['when'], action: StepHook['action']) {
      hooks.push({ step, when, action });
    },
    /** `action` runs once, right after the processor's next read of the service. */
    afterServiceRead(action: (serviceId: string) => Promise<void>) {
      readHooks.push(action);
    },
    /** How many times the runs so far moved their job to the delayed set (a release's pauses). */
    pauses: 0,
    /**
     * Runs the deploy job as one attempt: a job moved to the delayed set (a release that pauses in
     * its window, a service lock taken) runs again when it is due, as BullMQ would run it. A thrown
     * error is returned (the job would be retried or failed). `once`: a job moved to the delayed
     * set is not run again: the run resolves to `{ status: 'delayed' }`.
     */
    async run(
      deploymentId: string,
      attempt = 1,
      attempts = 3,
      options: { once?: boolean } = {},
    ): Promise<{ status: string } | Error> {
      let due: number | undefined;
      const job = {
        data: { deploymentId },
        attemptsMade: attempt - 1,
        opts: { attempts },
        updateProgress: async () => undefined,
        moveToDelayed: async (timestamp: number) => {
          due = timestamp;
        },
      } as unknown as Job<{ deploymentId: string }>;
      const givingUp = Date.now() + 60_000;
      try {
        for (;;) {
          due = undefined;
          try {
            return await processor(job);
          } catch (error) {
            if (!(error instanceof DelayedError) || due === undefined) return error as Error;
            if (options.once) return { status: 'delayed' };
            if (due > givingUp) return new Error('the job was still delayed after 60 s');
            this.pauses += 1;
            await sleep(Math.max(0, due - Date.now()));
          }
        }
      } finally {
        hooks.length = 0;
        readHooks.length = 0;
      }
    },
    async deploy(compose: string): Promise<CreatedService> {
      const service = await createComposeService(db, { compose });
      created.push(service);
      return service;
    },
    async redeploy(serviceId: string, compose?: string): Promise<string> {
      if (compose !== undefined) await db.service.update({ where: { id: serviceId }, data: { compose } });
      return createRedeployment(db, serviceId);
    },
    /** The API's cancel: one conditional update, refused once the deployment is at retire. */
    async cancelAsApi(deploymentId: string): Promise<boolean> {
      const done = await db.deployment.updateMany({
        where: {
          id: deploymentId,
          status: { in: ['queued', 'running'] },
          OR: [{ step: null }, { step: { not: 'retire' } }],
        },
        data: { status: 'cancelled', finishedAt: new Date(), error: 'cancelled by request' },
      });
      return done.count > 0;
    },
    async webOf(serviceId: string, deploymentId: string) {
      const [web] = await runtime.listContainers({
        [SERVICE_LABEL]: serviceId,
        [DEPLOYMENT_LABEL]: deploymentId,
        [COMPONENT_LABEL]: 'web',
      });
      return web ? runtime.inspectContainer(web.id) : null;
    },
    async logOf(deploymentId: string): Promise<string> {
      const rows = await db.deploymentLog.findMany({ where: { deploymentId }, orderBy: { seq: 'asc' } });
      return rows.map((row) => row.message).join('\n');
    },
    async close() {
      await deleteServiceRows(db, created);
      await locks.close();
      await db.$disconnect();
    },
  };
}

export type ReleaseHarness = ReturnType<typeof createReleaseHarness>;
