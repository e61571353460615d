import { randomUUID } from 'node:crypto';
import { DomainError } from '@hostctl/domain';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDockerRuntime } from './adapters/docker-runtime.js';
import { createImageRegistry } from './adapters/image-registry.js';
import type { RegistryAuth } from './adapters/registry-auth.js';
import { swarmNodeCount } from './adapters/swarm-members.js';
import { createSwarmRuntime } from './adapters/swarm-runtime.js';
import { distributeImages } from './release/image-distribution.js';
import { createRegistryAccess } from './release/registry-access.js';
import { startAuthRegistry, type AuthRegistry } from './testing/auth-registry.js';
import { webPlan } from './testing/plan-fixtures.js';
import { TEST_IMAGE, swarmTestSocket } from './testing/test-env.js';

// Issue 27, class 1: the platform registry held every tenant's images and accepted anonymous
// reads and deletes. The protected layout, against real registries: the worker pushes and
// deletes on a registry only its credentials open (REGISTRY), the nodes pull from a read-only
// registry serving the same storage with credentials of their own (REGISTRY_PULL_*), which can
// neither push nor delete; nobody without credentials reads or deletes anything. Once the swarm
// has more than one node, the worker pushes nothing to a registry that is not so protected: the
// dev stack's open registry (the one every earlier release used) is refused.
const DEV_REGISTRY = process.env.REGISTRY || '127.0.0.1:5000';
let registry: AuthRegistry;
let pull: AuthRegistry;
const engine = createDockerRuntime({ socketPath: process.env.DOCKER_SOCKET ?? '/var/run/docker.sock' });
const instance = `hostctl-access-${randomUUID().slice(0, 8)}`;
const log = { info: async () => {}, error: async () => {} };
const serviceIds: string[] = [];
let pushed = '';

beforeAll(async () => {
  registry = await startAuthRegistry({ username: 'hostctl-worker' });
  pull = await startAuthRegistry({ readOnlyOf: registry, username: 'hostctl-nodes' });
  const repository = `${registry.address}/hostctl/access-${randomUUID().slice(0, 8)}-web`;
  pushed = await engine.pushImage(TEST_IMAGE, { repository, tag: 'release-1', auth: registry.auth });
});
afterAll(async () => {
  for (const serviceId of serviceIds)
    await swarmRuntime()
      .tearDown(serviceId)
      .catch(() => undefined);
  await pull?.stop();
  await registry?.stop();
});

const swarmRuntime = (registryAuth?: RegistryAuth) =>
  createSwarmRuntime({
    socketPath: swarmTestSocket(),
    instance,
    timeoutMs: 60_000,
    monitorMs: 500,
    pollMs: 200,
    ...(registryAuth ? { registryAuth } : {}),
  });
const repositoryOf = (reference: string) =>
  reference.slice(reference.indexOf('/') + 1, reference.indexOf('@'));
const digestOf = (reference: string) => reference.slice(reference.indexOf('@') + 1);
/** A raw registry API request, with the given credentials or none. */
const api = (address: string, path: string, method = 'GET', auth?: RegistryAuth) =>
  fetch(`http://${address}/v2/${path}`, {
    method,
    headers: {
      accept: 'application/vnd.docker.distribution.manifest.v2+json',
      ...(auth
        ? { authorization: `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}` }
        : {}),
    },
  }).then((response) => response.status);
const twoNodes = async () => 2;

describe('the platform registry with more than one node', { timeout: 120_000 }, () => {
  it('refuses anyone without credentials to read, push or delete, on both endpoints', async () => {
    const manifest = `${repositoryOf(pushed)}/manifests/${digestOf(pushed)}`;
    for (const address of [registry.address, pull.address]) {
      expect(await api(address, '_catalog')).toBe(401);
      expect(await api(address, manifest, 'HEAD')).toBe(401);
      expect(await api(address, manifest, 'DELETE')).toBe(401);
      expect(await api(address, `${repositoryOf(pushed)}/blobs/uploads/`, 'POST')).toBe(401);
      expect(await createImageRegistry({ registry: address }).letsPush()).toBe(false);
    }
    // The image is still there for those who may read it.
    expect(await api(registry.address, manifest, 'HEAD', registry.auth)).toBe(200);
  });

  it('the nodes’ credentials read from the pull endpoint only, and can neither push nor delete', async () => {
    const manifest = `${repositoryOf(pushed)}/manifests/${digestOf(pushed)}`;
    const nodes = createImageRegistry({ registry: pull.address, auth: pull.auth });
    expect(await nodes.digest(repositoryOf(pushed), 'release-1')).toBe(digestOf(pushed));
    expect(await nodes.letsPush()).toBe(false);
    expect(await api(pull.address, manifest, 'DELETE', pull.auth)).toBeGreaterThanOrEqual(400);
    expect(await api(pull.address, manifest, 'HEAD', pull.auth)).toBe(200);
    await expect(
      engine.pushImage(TEST_IMAGE, {
        repository: `${pull.address}/hostctl/access-from-a-node`,
        tag: 'x',
        auth: pull.auth,
      }),
    ).rejects.toThrow();
    // On the worker's endpoint they are nobody.
    expect(await createImageRegistry({ registry: registry.address, auth: pull.auth }).letsRead()).toBe(false);
    expect(await api(registry.address, manifest, 'DELETE', pull.auth)).toBe(401);
  });

  it('pushes with the worker’s credentials, and a Swarm service written with the nodes’ pulls from the read-only endpoint and runs', async () => {
    const serviceId = randomUUID();
    serviceIds.push(serviceId);
    const plan = await distributeImages(
      engine,
      webPlan(TEST_IMAGE, { command: ['httpd', '-f', '-p', '8080'] }),
      {
        registry: registry.address,
        auth: registry.auth,
        pullRegistry: pull.address,
        access: createRegistryAccess({
          registry: registry.address,
          pullRegistry: pull.address,
          auth: registry.auth,
          pullAuth: pull.auth,
          nodeCount: twoNodes,
        }),
        serviceId,
        deploymentId: randomUUID(),
        log,
      },
    );
    expect(plan.containers[0]!.image).toMatch(new RegExp(`^${pull.address}/hostctl/.+@sha256:[a-f0-9]{64}$`));
    const swarm = swarmRuntime(pull.auth);
    await swarm.up({ serviceId, deploymentId: randomUUID(), plan }, log);
    expect((await swarm.observe(serviceId))[0]).toMatchObject({ desiredReplicas: 1, runningReplicas: 1 });
  });

  it('pushes nothing to an unprotected registry, naming what is wrong; one node keeps the open dev registry', async () => {
    const pushes: string[] = [];
    const recording = {
      pushImage: async (...args: Parameters<typeof engine.pushImage>) => {
        pushes.push(args[1].repository);
        return engine.pushImage(...args);
      },
    };
    const distribute = (access: ReturnType<typeof createRegistryAccess>, target: string) =>
      distributeImages(recording, webPlan(TEST_IMAGE), {
        registry: target,
        access,
        serviceId: randomUUID(),
        deploymentId: randomUUID(),
        log,
      }).then(
        () => undefined,
        (error: unknown) => error,
      );

    // The dev stack's registry: anonymous reads, pushes and deletes.
    const open = await distribute(
      createRegistryAccess({ registry: DEV_REGISTRY, pullRegistry: DEV_REGISTRY, nodeCount: twoNodes }),
      DEV_REGISTRY,
    );
    expect(open).toBeInstanceOf(DomainError);
    expect(open).toMatchObject({ code: 'image_unavailable' });
    expect((open as Error).message).toContain(`${DEV_REGISTRY} answers anonymous reads`);
    expect((open as Error).message).toContain(`${DEV_REGISTRY} accepts anonymous pushes`);
    expect((open as Error).message).toContain('REGISTRY_USERNAME');

    // The nodes handed the worker's own credentials: they could push and delete.
    const sameCredentials = await distribute(
      createRegistryAccess({
        registry: registry.address,
        pullRegistry: registry.address,
        auth: registry.auth,
        pullAuth: registry.auth,
        nodeCount: twoNodes,
      }),
      registry.address,
    );
    expect((sameCredentials as Error).message).toContain(
      `${registry.address} accepts pushes with the nodes' pull credentials`,
    );
    expect(pushes).toEqual([]);

    // One node (the dev stack's swarm engine, counted for real): nothing changes.
    expect(await swarmNodeCount(swarmTestSocket())).toBe(1);
    await createRegistryAccess({
      registry: DEV_REGISTRY,
      pullRegistry: DEV_REGISTRY,
      nodeCount: () => swarmNodeCount(swarmTestSocket()),
    }).assertProtected();
  });
});
