import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEPLOYMENT_LABEL, SERVICE_LABEL } from '@hostctl/domain';
import { QUEUES } from '@hostctl/queue';
import { afterAll, describe, expect, it } from 'vitest';
import { createDockerRuntime } from './adapters/docker-runtime.js';
import { noopRouter } from './adapters/router.js';
import { removeAll } from './runtime/engine-objects.js';
import {
  createComposeService,
  createTestDb,
  deleteServiceRows,
  httpGet,
  silentLogger,
  testConfig,
  uniquePrefix,
  waitFor,
  waitForDeployment,
  type CreatedService,
} from './testing/fixtures.js';
import { TEST_DATABASE_URL, TEST_REDIS_URL } from './testing/test-env.js';
import { createWorkerApp, type WorkerApp } from './worker-app.js';

// A worker process SIGKILLed in the middle of a deploy: the job comes back (BullMQ stall
// detection), the service lock died with the process's connection, and another replica finishes
// the deployment by reusing what was already created. Nothing lost, never two container sets.
const prefix = uniquePrefix('crash');
const db = createTestDb();
const runtime = createDockerRuntime({ socketPath: '/var/run/docker.sock' });
const created: CreatedService[] = [];
let child: ChildProcess | undefined;
let survivor: WorkerApp | undefined;

function startWorkerProcess(): ChildProcess {
  const cwd = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const env = {
    ...process.env,
    DATABASE_URL: TEST_DATABASE_URL,
    REDIS_URL: TEST_REDIS_URL,
    QUEUE_PREFIX: prefix,
    WORKER_HEALTH_PORT: '0',
    LOG_LEVEL: 'silent',
  };
  return spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { cwd, env, stdio: 'ignore' });
}

afterAll(async () => {
  child?.kill('SIGKILL');
  for (const item of created)
    await removeAll({ runtime, router: noopRouter, instance: prefix }, item.serviceId).catch(() => undefined);
  await deleteServiceRows(db, created);
  if (survivor) {
    for (const name of Object.values(QUEUES)) await survivor.producer.queue(name).obliterate({ force: true });
    await survivor.close(5000);
  }
  await db.$disconnect();
});

describe('a worker killed mid-deploy', () => {
  it('has its deployment finished by another replica', async () => {
    const slow =
      'services:\n  web:\n    image: local/busybox:1\n    command: ["sh", "-c", "sleep 4; exec httpd -f -p 8080 -h /www"]\n    ports: ["8080"]\n';
    const service = await createComposeService(db, { compose: slow });
    created.push(service);
    child = startWorkerProcess();
    survivor = createWorkerApp(testConfig(prefix), {
      logger: silentLogger,
      reconcile: false,
      readiness: { timeoutMs: 30_000, stableMs: 300 },
    });
    await survivor.producer.enqueue('deploy', { deploymentId: service.deploymentId });
    await waitFor(
      'the child to reach verify',
      async () =>
        (await db.deployment.findUniqueOrThrow({ where: { id: service.deploymentId } })).step === 'verify',
      60_000,
    );
    const [before] = await runtime.listContainers({ [SERVICE_LABEL]: service.serviceId });
    child.kill('SIGKILL');

    await survivor.start();
    const deployment = await waitForDeployment(db, service.deploymentId, 90_000);
    expect(deployment.status).toBe('succeeded');
    const containers = await runtime.listContainers({ [SERVICE_LABEL]: service.serviceId });
    expect(containers.map((container) => [container.id, container.labels[DEPLOYMENT_LABEL]])).toEqual([
      [before!.id, service.deploymentId],
    ]);
    const state = await runtime.inspectContainer(containers[0]!.id);
    expect((await httpGet(state!.ip!, 8080)).body).toBe('hello from busybox\n');
    const logs = await db.deploymentLog.findMany({
      where: { deploymentId: service.deploymentId },
      orderBy: { seq: 'asc' },
    });
    expect(logs.map((log) => log.message)).toContain('Reusing container ' + before!.name);
  });
});
