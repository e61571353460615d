import { createRedis, serviceLogStreamKey } from '@hostctl/queue';
import { afterAll, describe, expect, it } from 'vitest';
import { createComposeService, waitFor, waitForDeployment, type CreatedService } from './testing/fixtures.js';
import { deploymentLog } from './testing/repository-fixtures.js';
import { TEST_IMAGE, TEST_REDIS_URL } from './testing/test-env.js';
import { useSwarmWorkerApp } from './testing/swarm-worker-fixture.js';

// RUNTIME=swarm with the observers running: a service's output, health and usage come from its
// Swarm tasks on the manager (the swarm engine of the dev stack), not from the single engine
// (DOCKER_SOCKET), which has no container of these services at all. A task printing lines has them
// in the service's log stream; a task answering on its web port is healthy and has its CPU and
// memory sampled; a task that runs but never listens on its web port turns unhealthy.
const redis = createRedis(TEST_REDIS_URL, 'worker');
const worker = useSwarmWorkerApp('swarm-observe', {
  env: { RELEASE_STABILIZATION_MS: '1000', HEALTH_INTERVAL_MS: '1000', RESOURCE_INTERVAL_MS: '1000' },
  app: { observe: true, readiness: { timeoutMs: 60_000, stableMs: 300 } },
  hookTimeoutMs: 60_000,
});
const { db, app, prefix } = worker;
afterAll(() => redis.quit());

async function deploy(command: string): Promise<CreatedService> {
  const service = worker.track(
    await createComposeService(db, {
      compose: `services:\n  web:\n    image: ${TEST_IMAGE}\n    ports: ["8080"]\n    command: ["sh", "-c", "${command}"]\n`,
    }),
  );
  await app.producer.enqueue('deploy', { deploymentId: service.deploymentId });
  const deployment = await waitForDeployment(db, service.deploymentId, 120_000);
  expect(deployment.status, (await deploymentLog(db, service.deploymentId)).join('\n')).toBe('succeeded');
  return service;
}

const serviceRow = (service: CreatedService) =>
  db.service.findUniqueOrThrow({ where: { id: service.serviceId } });

describe('RUNTIME=swarm: logs, health and usage come from the tasks', { timeout: 120_000 }, () => {
  let serving: CreatedService;

  it("ships a task's output to the service's log stream", async () => {
    serving = await deploy(
      '(while true; do echo swarm-tick; sleep 0.2; done) & exec httpd -f -p 8080 -h /www',
    );
    const key = serviceLogStreamKey(prefix, serving.serviceId);
    const lines = await waitFor('task output in the log stream', async () => {
      const entries = await redis.xrange(key, '-', '+');
      const messages = entries.map(([, fields]) => fields.join(' '));
      return messages.filter((message) => message.includes('swarm-tick')).length >= 3 ? messages : undefined;
    });
    expect(lines.some((line) => line.includes('web'))).toBe(true);
  });

  it('reports a task answering on its web port healthy, and samples its usage', async () => {
    await waitFor('healthy', async () => (await serviceRow(serving)).healthStatus === 'healthy');
    const row = await waitFor('a usage sample', async () => {
      const current = await serviceRow(serving);
      return current.memoryUsageMb > 0 ? current : undefined;
    });
    // DEFAULT_CONTAINER_LIMITS apply on Swarm too: the limit is the task's, not the host's memory.
    expect(row.memoryLimitMb).toBeGreaterThan(0);
  });

  it('reports a task that runs but never listens on its web port unhealthy', async () => {
    const silent = await deploy('exec sleep 3600');
    const event = await waitFor('unhealthy', async () =>
      (await serviceRow(silent)).healthStatus === 'unhealthy'
        ? db.serviceEvent.findFirst({
            where: { serviceId: silent.serviceId, type: 'health' },
            orderBy: { createdAt: 'desc' },
          })
        : undefined,
    );
    expect(event.message).toMatch(/unhealthy/i);
  });
});
