import { randomUUID } from 'node:crypto';
import type { Plan, PlanContainer } from '@hostctl/compose';
import { isDomainError } from '@hostctl/domain';
import { afterAll, describe, expect, it } from 'vitest';
import type { RuntimeDriver } from '../runtime/driver.js';
import type { DeployLog } from '../pipeline/deploy-log.js';
import { PermanentStepError } from '../pipeline/step-errors.js';

/**
 * What every runtime driver promises the pipeline, run against each driver on its real engine
 * (the single Docker engine, and the swarm engine of scripts/lib/swarm-engine.sh) and against the
 * single engine's driver on the fake engine the logic tests use (testing/fake-runtime.ts). `image` must be
 * one the driver can run and serve TCP on 8080 (the stack's busybox); `missingImage` one its
 * registry does not have. `instance` keeps every reconciler of the dev stack off these objects.
 */
export function serviceRuntimeContract(
  name: string,
  make: () => {
    runtime: RuntimeDriver;
    image: string;
    missingImage: string;
    /** What makes the web component's process exit at start (default: `sh -c 'exit 3'`). */
    failing?: Partial<PlanContainer>;
  },
) {
  describe(`ServiceRuntime contract: ${name}`, { timeout: 90_000 }, () => {
    const { runtime, image, missingImage, failing: failingProcess } = make();
    const serviceId = randomUUID();
    const otherServiceId = randomUUID();
    const lines: string[] = [];
    const log: DeployLog = {
      info: async (line) => void lines.push(line),
      error: async (line) => void lines.push(line),
    };
    const web = (overrides: Partial<PlanContainer> = {}): PlanContainer => ({
      name: 'web',
      image,
      environment: { RELEASE: 'one' },
      labels: { 'com.example.tenant-label': 'kept' },
      volumes: [{ volume: 'data', target: '/data', readOnly: false }],
      ports: [8080],
      dependsOn: [],
      restart: 'always',
      init: true,
      limits: { memoryBytes: 64 * 1024 * 1024 },
      ...overrides,
    });
    const plan = (container: PlanContainer): Plan => ({
      containers: [container],
      volumes: container.volumes.map((mount) => mount.volume),
      web: { container: container.name, port: 8080 },
    });
    const release = (deploymentId: string, container: PlanContainer, id = serviceId) => ({
      serviceId: id,
      deploymentId,
      plan: plan(container),
    });
    const first = randomUUID();
    const second = randomUUID();

    afterAll(async () => {
      await runtime.tearDown(serviceId);
      await runtime.tearDown(otherServiceId);
    });

    it('brings a plan up and observes it running, with the deployment it runs', async () => {
      expect(await runtime.observe(serviceId)).toEqual([]);
      await runtime.up(release(first, web()), log);
      const [component, ...others] = await runtime.observe(serviceId);
      expect(others).toEqual([]);
      expect(component).toMatchObject({ component: 'web', deploymentId: first, runningReplicas: 1 });
      expect(component?.tasks.filter((task) => task.state === 'running')).toHaveLength(1);
      expect(component?.tasks[0]?.node).toBeTruthy();
    });

    it('says where the proxy reaches the web component, and it answers there', async () => {
      const endpoints = await runtime.webEndpoints(release(first, web()));
      expect(endpoints).toHaveLength(1);
      const [endpoint] = endpoints;
      const response = await fetch(`http://${endpoint!.host}:${endpoint!.port}/`, {
        signal: AbortSignal.timeout(5000),
      });
      // The stack's busybox httpd answers (its /www may have no index: 404 is an answer too).
      expect(response.status).toBeLessThan(500);
      expect(await runtime.webEndpoints(release(randomUUID(), web()))).toEqual([]);
    });

    it('replaces the running release with a new one', async () => {
      await runtime.up(release(second, web({ environment: { RELEASE: 'two' } })), log);
      const observed = await runtime.observe(serviceId);
      expect(observed.map(({ component, deploymentId }) => ({ component, deploymentId }))).toEqual([
        { component: 'web', deploymentId: second },
      ]);
      expect(observed[0]?.runningReplicas).toBe(1);
    });

    it('keeps the previous release serving when a new one fails, and says so', async () => {
      const failing = web(failingProcess ?? { command: ['sh', '-c', 'exit 3'], restart: 'no' });
      const error: unknown = await runtime
        .up(release(randomUUID(), failing), log)
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(PermanentStepError);
      const observed = await runtime.observe(serviceId);
      expect(observed.filter((item) => item.runningReplicas > 0)).toMatchObject([
        { component: 'web', deploymentId: second, runningReplicas: 1 },
      ]);
    });

    it('keeps the previous release serving when the new image cannot be pulled', async () => {
      const error: unknown = await runtime
        .up(release(randomUUID(), web({ image: missingImage })), log)
        .catch((caught: unknown) => caught);
      expect(isDomainError(error) && error.code).toBe('image_unavailable');
      const observed = await runtime.observe(serviceId);
      expect(observed.filter((item) => item.runningReplicas > 0)).toMatchObject([
        { component: 'web', deploymentId: second, runningReplicas: 1 },
      ]);
    });

    it('reports an image nobody can pull as image_unavailable', async () => {
      const error: unknown = await runtime
        .up(release(randomUUID(), web({ image: missingImage, volumes: [] }), otherServiceId), log)
        .catch((caught: unknown) => caught);
      expect(isDomainError(error) && error.code).toBe('image_unavailable');
    });

    it('tears a service down completely, and tearing down what is gone succeeds', async () => {
      await runtime.tearDown(serviceId);
      await runtime.tearDown(serviceId);
      expect(await runtime.observe(serviceId)).toEqual([]);
      // Up again from nothing: no network or volume of the torn-down service is in the way.
      await runtime.up(release(randomUUID(), web()), log);
      expect((await runtime.observe(serviceId))[0]?.runningReplicas).toBe(1);
      await runtime.tearDown(serviceId);
      expect(await runtime.observe(serviceId)).toEqual([]);
    });
  });
}
