import { QueueEvents } from 'bullmq';
import type { Db } from '@hostctl/db';
import { QUEUES, createRedis } from '@hostctl/queue';
import { afterAll, beforeAll } from 'vitest';
import { createDockerRuntime } from '../adapters/docker-runtime.js';
import { noopRouter } from '../adapters/router.js';
import type { ContainerRuntime } from '../adapters/runtime.js';
import { removeAll } from '../runtime/engine-objects.js';
import { createWorkerApp, type WorkerApp, type WorkerAppOptions } from '../worker-app.js';
import {
  createComposeService,
  createTestDb,
  deleteServiceRows,
  silentLogger,
  testConfig,
  uniquePrefix,
  type CreatedService,
} from './fixtures.js';
import { TEST_REDIS_URL } from './test-env.js';

/**
 * One worker app per test file, the way every worker e2e file set it up by hand: its own queue
 * prefix, the worker test database, a runtime to look at (and clean up) what it deployed, and a
 * teardown that leaves no containers, rows or queues behind even when a test failed midway.
 *
 * The hooks are registered here, at the call (top level of the file): beforeAll starts the app
 * before the file's own beforeAll hooks run, and afterAll tears it down after the file's own
 * afterAll hooks (Vitest runs after-hooks in stack order). Clean-up that must happen between
 * steps of the teardown goes through the options below, so the order stays what it was.
 */
export interface WorkerFixtureOptions<R extends ContainerRuntime = ContainerRuntime> {
  /** The app's runtime (a fake runtime); without it the app and the fixture each talk to Docker. */
  runtime?: R;
  /** testConfig overrides (environment variables). */
  env?: Record<string, string>;
  /** Over the defaults { logger: silentLogger, reconcile: false }. */
  app?: Omit<WorkerAppOptions, 'runtime'>;
  /** Start the app's workers in beforeAll (default true); the reconciler test only sweeps. */
  start?: boolean;
  /** A QueueEvents on the operations queue (lifecycle results), ready after start, closed before the app. */
  operationEvents?: boolean;
  /** Before the app starts (a git server the app must reach, a stand-in...). */
  beforeStart?: () => Promise<unknown>;
  /** After the app started, inside the same hook (so it shares the hook's timeout). */
  afterStart?: () => Promise<unknown>;
  /** After the tracked services' containers and rows are gone, before the queues are obliterated. */
  cleanup?: () => Promise<unknown>;
  /** After the app is closed, before the database disconnects. */
  afterClose?: () => Promise<unknown>;
  /** app.close() grace (default 5000). */
  closeTimeoutMs?: number;
  /** Timeout of the fixture's hooks (default: the project's hookTimeout). */
  hookTimeoutMs?: number;
}

export interface WorkerFixture<R extends ContainerRuntime = ContainerRuntime> {
  prefix: string;
  db: Db;
  app: WorkerApp;
  /** Where the test looks at containers: options.runtime, or a Docker runtime of its own. */
  runtime: R;
  /** Services removed (containers, routes, rows) in afterAll. */
  created: CreatedService[];
  /** Lifecycle results (job.waitUntilFinished); only with options.operationEvents, else it throws. */
  readonly operationEvents: QueueEvents;
  track<T extends CreatedService>(service: T): T;
  /** A compose service created as the API would, tracked, and its deploy job enqueued (not awaited). */
  deploy(input: Parameters<typeof createComposeService>[1]): Promise<CreatedService>;
}

export function useWorkerApp<R extends ContainerRuntime = ContainerRuntime>(
  label: string,
  options: WorkerFixtureOptions<R> = {},
): WorkerFixture<R> {
  const prefix = uniquePrefix(label);
  const db = createTestDb();
  const runtime = options.runtime ?? (createDockerRuntime({ socketPath: '/var/run/docker.sock' }) as R);
  const app = createWorkerApp(testConfig(prefix, options.env), {
    logger: silentLogger,
    reconcile: false,
    ...options.app,
    ...(options.runtime ? { runtime: options.runtime } : {}),
  });
  const operationEvents = options.operationEvents
    ? new QueueEvents(QUEUES.operations, { connection: createRedis(TEST_REDIS_URL, 'worker'), prefix })
    : undefined;
  const created: CreatedService[] = [];
  const track = <T extends CreatedService>(service: T): T => {
    created.push(service);
    return service;
  };

  beforeAll(async () => {
    await options.beforeStart?.();
    if (options.start !== false) await app.start();
    await operationEvents?.waitUntilReady();
    await options.afterStart?.();
  }, options.hookTimeoutMs);

  afterAll(async () => {
    for (const item of created)
      await removeAll({ runtime, router: noopRouter, instance: prefix }, item.serviceId).catch(
        () => undefined,
      );
    await deleteServiceRows(db, created);
    await options.cleanup?.();
    for (const name of Object.values(QUEUES)) await app.producer.queue(name).obliterate({ force: true });
    await operationEvents?.close();
    await app.close(options.closeTimeoutMs ?? 5000);
    await options.afterClose?.();
    await db.$disconnect();
  }, options.hookTimeoutMs);

  return {
    prefix,
    db,
    app,
    runtime,
    created,
    get operationEvents() {
      if (!operationEvents) throw new Error('useWorkerApp: operationEvents needs options.operationEvents');
      return operationEvents;
    },
    track,
    async deploy(input) {
      const service = track(await createComposeService(db, input));
      await app.producer.enqueue('deploy', { deploymentId: service.deploymentId });
      return service;
    },
  };
}
