import { randomUUID } from 'node:crypto';
import { DomainError } from '@hostctl/domain';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDockerClient } from './adapters/docker-client.js';
import { createDockerRuntime } from './adapters/docker-runtime.js';
import { createImageRegistry } from './adapters/image-registry.js';
import type { RegistryAuth } from './adapters/registry-auth.js';
import { createSwarmRestarts } from './adapters/swarm-restarts.js';
import { createSwarmRuntime } from './adapters/swarm-runtime.js';
import { waitFor } from './testing/fixtures.js';
import { webPlan } from './testing/plan-fixtures.js';
import { startAuthRegistry, type AuthRegistry } from './testing/auth-registry.js';
import { TEST_IMAGE, swarmTestSocket } from './testing/test-env.js';

// Issue 17: "pull credentials handled; a node that cannot pull is an error the deployment
// reports". Against a real registry that wants credentials (htpasswd): the worker pushes with
// REGISTRY_USERNAME/PASSWORD, lists and deletes with them, and hands them to Swarm with the
// service, so the node pulls; a Swarm service written without them cannot pull, and the release
// is image_unavailable. Without credentials every step is refused. A service left with an old
// password gets the current one with its next write (a restore, start or restart).
let registry: AuthRegistry;
const engine = createDockerRuntime({ socketPath: process.env.DOCKER_SOCKET ?? '/var/run/docker.sock' });
const prefix = `hostctl/auth-${randomUUID().slice(0, 8)}-`;
const instance = `hostctl-auth-${randomUUID().slice(0, 8)}`;
const log = { info: async () => {}, error: async () => {} };
const serviceIds: string[] = [];
let pushed = '';

beforeAll(async () => {
  registry = await startAuthRegistry();
});
afterAll(async () => {
  for (const serviceId of serviceIds)
    await swarmRuntime()
      .tearDown(serviceId)
      .catch(() => undefined);
  await registry?.stop();
});

const releaseOf = (image: string) => {
  const serviceId = randomUUID();
  serviceIds.push(serviceId);
  return {
    serviceId,
    deploymentId: randomUUID(),
    plan: webPlan(image, { command: ['httpd', '-f', '-p', '8080'] }),
  };
};
/** The driver as the worker makes it, with or without the registry's credentials. */
const swarmRuntime = (registryAuth?: RegistryAuth) =>
  createSwarmRuntime({
    socketPath: swarmTestSocket(),
    instance,
    timeoutMs: 60_000,
    monitorMs: 500,
    pollMs: 200,
    ...(registryAuth ? { registryAuth } : {}),
  });

describe('RUNTIME=swarm with a platform registry that wants credentials', { timeout: 120_000 }, () => {
  it('pushes only with the credentials', async () => {
    const target = { repository: `${registry.address}/${prefix}web`, tag: 'release-1' };
    await expect(engine.pushImage(TEST_IMAGE, target)).rejects.toThrow(
      /no basic auth credentials|unauthorized/i,
    );
    pushed = await engine.pushImage(TEST_IMAGE, { ...target, auth: registry.auth });
    expect(pushed).toMatch(new RegExp(`^${registry.address}/${prefix}web@sha256:[a-f0-9]{64}$`));
  });

  it('lists and deletes what it pushed with the credentials; the registry refuses anyone else', async () => {
    const anonymous = createImageRegistry({ registry: registry.address });
    await expect(anonymous.repositories(prefix)).rejects.toThrow(/401/);
    const withAuth = createImageRegistry({ registry: registry.address, auth: registry.auth });
    expect(await withAuth.repositories(prefix)).toEqual([`${prefix}web`]);
    expect(await withAuth.tags(`${prefix}web`)).toEqual(['release-1']);
    expect(await withAuth.digest(`${prefix}web`, 'release-1')).toBe(pushed.split('@')[1]);
  });

  it('hands the credentials to Swarm with the service: its task pulls and runs', async () => {
    const swarm = swarmRuntime(registry.auth);
    const release = releaseOf(pushed);
    await swarm.up(release, log);
    const [web] = await swarm.observe(release.serviceId);
    expect(web).toMatchObject({ desiredReplicas: 1, runningReplicas: 1 });
  });

  it('a Swarm service written without them cannot pull: the release is image_unavailable', async () => {
    // The swarm engine may hold the image from the previous case: another tag of another
    // repository is an image no node has.
    const target = {
      repository: `${registry.address}/${prefix}other`,
      tag: 'release-2',
      auth: registry.auth,
    };
    const other = await engine.pushImage(TEST_IMAGE, target);
    const swarm = swarmRuntime();
    const failure = await swarm.up(releaseOf(other), log).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(DomainError);
    expect(failure).toMatchObject({ code: 'image_unavailable' });
    expect((failure as Error).message).toMatch(/could not pull the image/);
  });

  it('a restore or restart writes the current credentials: a service left with an old password pulls again', async () => {
    // A password changed since the service was written: Swarm keeps the old one with the spec,
    // and every node's pull is refused until a write hands it the current one.
    const target = {
      repository: `${registry.address}/${prefix}rotated`,
      tag: 'release-3',
      auth: registry.auth,
    };
    const rotated = await engine.pushImage(TEST_IMAGE, target);
    const release = releaseOf(rotated);
    const stale = swarmRuntime({ ...registry.auth, password: 'the-password-before-rotation' });
    await expect(stale.up(release, log)).rejects.toMatchObject({ code: 'image_unavailable' });

    const docker = createDockerClient(swarmTestSocket());
    await createSwarmRestarts(docker, instance, registry.auth).restart(release.serviceId, ['web']);
    const swarm = swarmRuntime(registry.auth);
    await waitFor(
      'the restored task to pull and run',
      async () => (await swarm.observe(release.serviceId))[0]?.runningReplicas === 1,
      60_000,
    );
  });
});
