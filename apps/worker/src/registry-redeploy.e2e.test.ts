import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import Docker from 'dockerode';
import { COMPONENT_LABEL, SERVICE_LABEL } from '@hostctl/domain';
import { describe, expect, it } from 'vitest';
import { createDockerImageBuilder } from './adapters/docker-image-builder.js';
import { createComposeService, createRedeployment, httpGet, waitForDeployment } from './testing/fixtures.js';
import { deploymentLog } from './testing/repository-fixtures.js';
import { TEST_IMAGE } from './testing/test-env.js';
import { useWorkerApp } from './testing/worker-fixture.js';

// "Redeploy pulls the latest image": v1 and then v2 are pushed under one tag of the local
// registry; the engine's own copy of the tag is pointed back at v1 before the redeploy, so only a
// real pull can make the service serve v2.
const docker = new Docker({ socketPath: '/var/run/docker.sock' });
const builder = createDockerImageBuilder({ socketPath: '/var/run/docker.sock' });
const repository = `127.0.0.1:5000/hostctl-test-${randomUUID().slice(0, 8)}`;
const tag = `${repository}:latest`;
const imageIds: string[] = [];
const digests = new Set<string>();
let workDir: string;
const { db, runtime, app, created } = useWorkerApp('registry', {
  app: { observe: false, readiness: { timeoutMs: 20_000, stableMs: 300 } },
  beforeStart: async () => (workDir = await mkdtemp(path.join(os.tmpdir(), 'hostctl-registry-test-'))),
  cleanup: async () => {
    for (const id of imageIds)
      await docker
        .getImage(id)
        .remove({ force: true })
        .catch(() => undefined);
    // Leave the registry as we found it (deletes are enabled there).
    const name = repository.replace('127.0.0.1:5000/', '');
    for (const digest of [...digests, ...(await registryDigests(name))])
      await fetch(`http://127.0.0.1:5000/v2/${name}/manifests/${digest}`, { method: 'DELETE' }).catch(
        () => undefined,
      );
  },
  afterClose: () => rm(workDir, { recursive: true, force: true }),
});

async function buildAndPush(text: string): Promise<string> {
  await writeFile(path.join(workDir, 'index.html'), text);
  await writeFile(path.join(workDir, 'Dockerfile'), `FROM ${TEST_IMAGE}\nCOPY index.html /www/index.html\n`);
  const built = await builder.build(
    { contextDir: workDir, dockerfile: 'Dockerfile', tag, labels: {} },
    () => {},
    AbortSignal.timeout(60_000),
  );
  imageIds.push(built.id);
  // The empty authconfig is required by dockerode's push to a registry without auth.
  const stream = await docker.getImage(tag).push({ authconfig: {} });
  const events = await new Promise<{ error?: string }[]>((resolve, reject) =>
    docker.modem.followProgress(stream, (error, output) =>
      error ? reject(error) : resolve(output as never),
    ),
  );
  const failed = events.find((event) => event.error);
  if (failed) throw new Error(`push failed: ${failed.error}`);
  return built.id;
}

async function served(serviceId: string): Promise<string> {
  const [web] = await runtime.listContainers({ [SERVICE_LABEL]: serviceId, [COMPONENT_LABEL]: 'web' });
  const state = web ? await runtime.inspectContainer(web.id) : null;
  if (!state?.ip) throw new Error('web container has no address');
  return (await httpGet(state.ip, 8080, '/')).body;
}

async function registryDigests(name: string): Promise<string[]> {
  const response = await fetch(`http://127.0.0.1:5000/v2/${name}/manifests/latest`, {
    method: 'HEAD',
    headers: { accept: 'application/vnd.docker.distribution.manifest.v2+json' },
  });
  const digest = response.headers.get('docker-content-digest');
  return digest ? [digest] : [];
}

describe('redeploying an image that names a registry', () => {
  it('pulls the tag again, serves the new image and records its new digest', async () => {
    const v1 = await buildAndPush('v1 from the registry');
    const service = await createComposeService(db, {
      compose: `services:\n  web:\n    image: ${tag}\n    ports: ["8080"]\n`,
    });
    created.push(service);
    await app.producer.enqueue('deploy', { deploymentId: service.deploymentId });
    const first = await waitForDeployment(db, service.deploymentId);
    expect(first.status).toBe('succeeded');
    expect(first.imageDigest).toMatch(
      new RegExp(`^${repository.replace(/\./g, '\\.')}@sha256:[0-9a-f]{64}$`),
    );
    digests.add(first.imageDigest!.split('@')[1]!);
    expect(await served(service.serviceId)).toBe('v1 from the registry');

    await buildAndPush('v2 from the registry');
    // The engine's tag goes back to v1: without a pull the redeploy would run v1 again.
    await docker.getImage(v1).tag({ repo: repository, tag: 'latest' });
    const redeployId = await createRedeployment(db, service.serviceId);
    await app.producer.enqueue('deploy', { deploymentId: redeployId });
    const second = await waitForDeployment(db, redeployId);
    expect(second.status).toBe('succeeded');
    expect(second.imageDigest).toMatch(/@sha256:[0-9a-f]{64}$/);
    expect(second.imageDigest).not.toBe(first.imageDigest);
    digests.add(second.imageDigest!.split('@')[1]!);
    expect(await registryDigests(repository.replace('127.0.0.1:5000/', ''))).toEqual([
      second.imageDigest!.split('@')[1],
    ]);
    expect(await deploymentLog(db, redeployId)).toContain(`Pulling ${tag}`);
    expect(await served(service.serviceId)).toBe('v2 from the registry');
  });
});
