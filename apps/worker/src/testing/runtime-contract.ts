import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { isDomainError } from '@hostctl/domain';
import { afterAll, describe, expect, it } from 'vitest';
import type { ContainerRuntime, ContainerSpec } from '../adapters/runtime.js';
import { connects } from '../health/port-probe.js';

/**
 * What every ContainerRuntime promises the pipeline, run against the Docker runtime (real engine)
 * and the fake one: a fake that drifted from the engine would make the logic tests lie.
 * `image` must exist locally and serve TCP on 8080 by default (the stack's local/busybox:1).
 */
export function runtimeContract(name: string, make: () => { runtime: ContainerRuntime; image: string }) {
  describe(`ContainerRuntime contract: ${name}`, () => {
    const { runtime, image } = make();
    const run = randomUUID().slice(0, 8);
    // Not the platform's ownership labels: no reconciler may mistake these objects for its own.
    const labels = { 'io.hostctl.contract': run };
    const network = `hostctl-contract-${run}`;
    const volume = `hostctl-contract-${run}-data`;
    const spec = (suffix: string): ContainerSpec => ({
      name: `hostctl-contract-${run}-${suffix}`,
      image,
      env: [],
      labels,
      exposedPorts: [8080],
      init: true,
      restart: { name: 'no' },
      mounts: [{ volume, target: '/data', readOnly: false }],
      network,
      aliases: ['web'],
    });

    afterAll(async () => {
      for (const container of await runtime.listContainers(labels))
        await runtime.removeContainer(container.id);
      for (const found of await runtime.listNetworks(labels)) await runtime.removeNetwork(found.id);
      for (const found of await runtime.listVolumes(labels)) await runtime.removeVolume(found.name);
    });

    it('answers ping and knows local images from missing ones', async () => {
      await runtime.ping();
      expect((await runtime.inspectImage(image))?.id).toMatch(/^sha256:/);
      expect(await runtime.inspectImage(`hostctl-contract/missing-${run}:1`)).toBeNull();
    });

    it('reports an image its registry does not have as image_unavailable (not retryable)', async () => {
      const error: unknown = await runtime
        .pullImage(`127.0.0.1:5000/hostctl-contract/missing-${run}:1`, () => undefined)
        .catch((caught: unknown) => caught);
      expect(isDomainError(error) && error.code).toBe('image_unavailable');
    });

    it('pushes a local image to the registry and names it by digest, the same digest each time', async () => {
      const repository = `127.0.0.1:5000/hostctl-contract/pushed-${run}`;
      const pushed = await runtime.pushImage(image, { repository, tag: 'one' });
      expect(pushed.slice(0, repository.length + 1)).toBe(`${repository}@`);
      expect(pushed).toMatch(/@sha256:[0-9a-f]{64}$/);
      expect(await runtime.pushImage(image, { repository, tag: 'two' })).toBe(pushed);
      // What a node does with it: pull by the digest.
      await runtime.pullImage(pushed, () => undefined);
      expect((await runtime.inspectImage(`${repository}:one`))?.id).toBe(
        (await runtime.inspectImage(image))?.id,
      );
      const missing: unknown = await runtime
        .pushImage(`hostctl-contract/missing-${run}:1`, { repository, tag: 'three' })
        .catch((caught: unknown) => caught);
      expect(isDomainError(missing) && missing.code).toBe('image_unavailable');
    });

    it('ensures networks and volumes idempotently, found by their labels', async () => {
      await runtime.ensureNetwork(network, labels);
      await runtime.ensureNetwork(network, labels);
      await runtime.ensureVolume(volume, labels);
      await runtime.ensureVolume(volume, labels);
      expect((await runtime.listNetworks(labels)).map((n) => n.name)).toEqual([network]);
      expect((await runtime.listVolumes(labels)).map((v) => v.name)).toEqual([volume]);
    });

    it('creates a container that runs only once started, then serves on its address', async () => {
      const id = await runtime.createContainer(spec('web'));
      const created = await runtime.inspectContainer(id);
      expect(created).toMatchObject({ id, name: spec('web').name, isRunning: false });
      expect(await runtime.inspectContainer(spec('web').name)).toMatchObject({ id });
      expect((await runtime.listContainers(labels)).map((c) => c.id)).toEqual([id]);

      await runtime.startContainer(id);
      const started = await runtime.inspectContainer(id);
      expect(started).toMatchObject({ isRunning: true, restartCount: 0 });
      expect(started?.ip).toBeTruthy();
      let serving = false;
      for (let i = 0; i < 100 && !serving; i++) {
        serving = await connects(started!.ip!, 8080, 500);
        if (!serving) await sleep(100);
      }
      expect(serving).toBe(true);
      expect((await runtime.listContainers(labels))[0]?.state).toBe('running');
    });

    it('counts the health checks a container passed in a row, growing while it keeps passing', async () => {
      const id = await runtime.createContainer({
        ...spec('checked'),
        mounts: [],
        healthcheck: {
          test: ['CMD', 'true'],
          intervalMs: 200,
          timeoutMs: 1000,
          retries: 1,
          startPeriodMs: 0,
        },
      });
      expect((await runtime.inspectContainer(id))?.healthyStreak).toBeUndefined();
      await runtime.startContainer(id);
      let state = await runtime.inspectContainer(id);
      for (let i = 0; i < 100 && (state?.healthyStreak ?? 0) < 2; i++) {
        await sleep(100);
        state = await runtime.inspectContainer(id);
      }
      expect(state).toMatchObject({ health: 'healthy' });
      expect(state?.healthyStreak).toBeGreaterThanOrEqual(2);
      expect(state?.healthyStreak).toBeLessThanOrEqual(5);
      await runtime.removeContainer(id);
    });

    it('finds an image by its id and creates a container from the id (a rollback pins local images so)', async () => {
      const { id: imageId } = (await runtime.inspectImage(image))!;
      expect((await runtime.inspectImage(imageId))?.id).toBe(imageId);
      const id = await runtime.createContainer({ ...spec('pinned'), image: imageId, mounts: [] });
      expect(await runtime.inspectContainer(id)).toMatchObject({ isRunning: false });
      await runtime.removeContainer(id);
    });

    it('refuses a second container with a name in use', async () => {
      await expect(runtime.createContainer(spec('web'))).rejects.toThrow();
    });

    it('stops and restarts a container', async () => {
      const id = (await runtime.inspectContainer(spec('web').name))!.id;
      await runtime.stopContainer(id, 5);
      expect(await runtime.inspectContainer(id)).toMatchObject({ isRunning: false });
      await runtime.restartContainer(id, 5);
      expect(await runtime.inspectContainer(id)).toMatchObject({ isRunning: true });
    });

    it('removes containers, networks and volumes, and removing what is gone succeeds', async () => {
      const id = (await runtime.inspectContainer(spec('web').name))!.id;
      await runtime.removeContainer(id);
      await runtime.removeContainer(id);
      expect(await runtime.inspectContainer(id)).toBeNull();
      expect(await runtime.listContainers(labels)).toEqual([]);
      for (const found of await runtime.listNetworks(labels)) await runtime.removeNetwork(found.id);
      for (const found of await runtime.listVolumes(labels)) await runtime.removeVolume(found.name);
      expect(await runtime.listNetworks(labels)).toEqual([]);
      expect(await runtime.listVolumes(labels)).toEqual([]);
    });
  });
}
