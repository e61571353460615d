import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { dockerNamePrefix } from '@hostctl/domain';
import { afterAll, describe, expect, it } from 'vitest';
import { createComposeService, createRedeployment, waitFor, waitForDeployment } from './testing/fixtures.js';
import { deploymentLog } from './testing/repository-fixtures.js';
import { TEST_IMAGE } from './testing/test-env.js';
import { useSwarmWorkerApp } from './testing/swarm-worker-fixture.js';

// RUNTIME=swarm pushes every release's images to the platform registry (tag = deployment id) so
// the nodes can pull them. Those copies follow the releases: with RELEASES_KEPT=2 only the last
// two releases' images stay in the registry (a rollback target keeps its image), a release of an
// unchanged image keeps the digest it shares, and deleting the service removes the rest. Read
// back from the real registry's HTTP API; each release runs an image of its own, built here.
const REGISTRY = '127.0.0.1:5000';
const IMAGE = `local/registry-test-${randomUUID().slice(0, 8)}`;
const worker = useSwarmWorkerApp('swarm-registry', {
  env: { RELEASES_KEPT: '2', RELEASE_STABILIZATION_MS: '500' },
  app: { observe: false, readiness: { timeoutMs: 60_000, stableMs: 300 } },
});
const { db, app } = worker;
afterAll(() => {
  for (const release of ['1', '2', '3'])
    execFileSync('docker', ['image', 'rm', '-f', `${IMAGE}:${release}`], { stdio: 'ignore' });
});

/** An image whose digest differs from every other release's (a label of its own). */
function buildRelease(release: string): void {
  execFileSync('docker', ['build', '-q', '-t', `${IMAGE}:${release}`, '-'], {
    input: `FROM ${TEST_IMAGE}\nLABEL io.hostctl.test.release=${release}\n`,
    stdio: ['pipe', 'ignore', 'pipe'],
  });
}

async function registryJson<T>(path: string): Promise<T> {
  return (await (await fetch(`http://${REGISTRY}/v2/${path}`)).json()) as T;
}

/** Every tag of the service's repositories, as `<repository>:<tag>`. */
async function registryTags(serviceId: string): Promise<string[]> {
  const catalog = await registryJson<{ repositories: string[] | null }>('_catalog?n=1000');
  const tags: string[] = [];
  for (const repository of catalog.repositories ?? []) {
    if (!repository.startsWith(`hostctl/${dockerNamePrefix(serviceId)}-`)) continue;
    const list = await registryJson<{ tags: string[] | null }>(`${repository}/tags/list`);
    for (const tag of list.tags ?? []) tags.push(`${repository}:${tag}`);
  }
  return tags.sort();
}

/** Waits for the registry to hold exactly `expected` of the service (pruning follows a success). */
async function tagsBecome(serviceId: string, expected: string[]): Promise<void> {
  let last: string[] = [];
  await waitFor(
    'the registry to hold the kept releases only',
    async () => {
      last = await registryTags(serviceId);
      return JSON.stringify(last) === JSON.stringify([...expected].sort());
    },
    15_000,
  ).catch(() => undefined);
  expect(last).toEqual([...expected].sort());
}

async function release(serviceId: string, image: string): Promise<string> {
  await db.service.update({ where: { id: serviceId }, data: { variables: { RELEASE: image } } });
  const deploymentId = await createRedeployment(db, serviceId);
  await app.producer.enqueue('deploy', { deploymentId });
  const deployment = await waitForDeployment(db, deploymentId, 120_000);
  expect(deployment.status, (await deploymentLog(db, deploymentId)).join('\n')).toBe('succeeded');
  return deploymentId;
}

describe('RUNTIME=swarm: the images pushed for the nodes follow the releases', { timeout: 240_000 }, () => {
  it('keeps the last RELEASES_KEPT releases in the registry and removes the rest with the service', async () => {
    for (const name of ['1', '2', '3']) buildRelease(name);
    const service = worker.track(
      await createComposeService(db, {
        compose: `services:\n  web:\n    image: ${IMAGE}:\${RELEASE}\n    ports: ["8080"]\n`,
        variables: { RELEASE: '1' },
      }),
    );
    await app.producer.enqueue('deploy', { deploymentId: service.deploymentId });
    expect((await waitForDeployment(db, service.deploymentId, 120_000)).status).toBe('succeeded');
    const repository = `hostctl/${dockerNamePrefix(service.serviceId)}-web`;
    const second = await release(service.serviceId, '2');
    const third = await release(service.serviceId, '3');
    // Pruned right after the release is marked succeeded.
    await tagsBecome(service.serviceId, [`${repository}:${second}`, `${repository}:${third}`]);
    // The line is written once the registry answered the deletes, so it may trail the tags.
    const pruned = `Removed from the registry the images of releases older than the last 2: ${repository}:${service.deploymentId}`;
    await waitFor(
      'the release to log what it pruned',
      async () => (await deploymentLog(db, third)).join('\n').includes(pruned),
      15_000,
    ).catch(() => undefined);
    expect((await deploymentLog(db, third)).join('\n')).toContain(pruned);

    // The same image again, twice: release 3 falls out of the kept two, but its digest is theirs
    // (deleting it would take their tags too), so its tag stays; release 2 goes.
    const again = await release(service.serviceId, '3');
    const last = await release(service.serviceId, '3');
    await tagsBecome(
      service.serviceId,
      [third, again, last].map((id) => `${repository}:${id}`),
    );

    await db.service.update({ where: { id: service.serviceId }, data: { deletedAt: new Date() } });
    await app.producer.enqueue('delete', { serviceId: service.serviceId });
    await waitFor(
      'purged',
      async () => (await db.service.findUniqueOrThrow({ where: { id: service.serviceId } })).purgedAt,
      60_000,
    );
    await tagsBecome(service.serviceId, []);
  });
});
