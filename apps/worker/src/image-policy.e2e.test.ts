import { randomUUID } from 'node:crypto';
import Docker from 'dockerode';
import { describe, expect, it } from 'vitest';
import { createDockerClient } from './adapters/docker-client.js';
import { createComposeService, waitForDeployment } from './testing/fixtures.js';
import { deploymentLog } from './testing/repository-fixtures.js';
import { TEST_IMAGE } from './testing/test-env.js';
import { useWorkerApp } from './testing/worker-fixture.js';

// Hostile plans written straight into the database (the API would have refused them): each fails
// its own deployment for good, nothing reaches the engine's API paths or the control plane, and
// the same worker goes on to deploy the next service. The registry allowlist here is deliberately
// too wide (every loopback port): the control plane's endpoints must stay refused regardless.
const docker = new Docker({ socketPath: '/var/run/docker.sock' });
// Another service's build, as the builder would tag it: present on the engine, never nameable.
const foreignBuild = `hostctl/${randomUUID().replace(/-/g, '').slice(0, 12)}:${'ab'.repeat(20)}`;
let busyboxId = '';
const { db, runtime, app, created } = useWorkerApp('images', {
  env: { REGISTRY_ALLOWED_HOSTS: '127.0.0.1:1-65535' },
  app: { observe: false, readiness: { timeoutMs: 20_000, stableMs: 300 } },
  afterStart: async () => {
    busyboxId = (await docker.getImage(TEST_IMAGE).inspect()).Id;
    const [repo, tag] = foreignBuild.split(':') as [string, string];
    await docker.getImage(TEST_IMAGE).tag({ repo, tag });
  },
  cleanup: () =>
    docker
      .getImage(foreignBuild)
      .remove({ noprune: true })
      .catch(() => undefined),
});

async function deploy(image: string) {
  const service = await createComposeService(db, {
    compose: `services:\n  web:\n    image: ${JSON.stringify(image)}\n    ports: ["8080"]\n`,
  });
  created.push(service);
  await app.producer.enqueue('deploy', { deploymentId: service.deploymentId });
  return service;
}

describe('a hostile plan that bypassed the API', () => {
  const hostile: [string, () => string, RegExp][] = [
    ['path traversal into the engine API', () => 'x/../../containers/foo', /image reference/],
    ['encoded traversal', () => 'x/%2e%2e/%2e%2e/containers/foo', /image reference/],
    ['query string', () => 'local/busybox:1?x=1', /image reference/],
    ['an id prefix of an image on the engine', () => busyboxId.slice(7, 19), /image id prefix/],
    ['a full image id', () => busyboxId, /image id/],
    ['another service’s built image', () => foreignBuild, /reserved/],
    ['a built image via the registry', () => `127.0.0.1:5000/${foreignBuild}`, /reserved/],
    ['Caddy admin as a registry', () => '127.0.0.1:2019/x/y:1', /control-plane endpoint/],
    ['PowerDNS as a registry', () => 'localhost:8081/x/y:1', /control-plane endpoint/],
    ['Redis over IPv6 as a registry', () => '[::1]:6379/x:1', /control-plane endpoint/],
    ['cloud metadata as a registry', () => '169.254.169.254/latest:1', /link-local/],
    ['an unlisted host-less image', () => 'alpine:3.20', /platform image/],
  ];

  it('fails each one for good while the worker keeps deploying the next service', async () => {
    const bad = [];
    for (const [label, image] of hostile) bad.push({ label, service: await deploy(image()) });
    const good = await deploy(TEST_IMAGE);
    for (const { label, service } of bad) {
      const deployment = await waitForDeployment(db, service.deploymentId);
      const reason = hostile.find(([name]) => name === label)![2];
      expect(deployment.status, label).toBe('failed');
      expect(deployment.error, label).toMatch(reason);
      const log = (await deploymentLog(db, service.deploymentId)).join('\n');
      // Nothing was pulled, so no reply of an internal endpoint can be in the tenant's log.
      expect(log, label).not.toMatch(/Pulling|Image .*: sha256/);
    }
    expect((await waitForDeployment(db, good.deploymentId)).status).toBe('succeeded');
  });
});

describe('the Docker client', () => {
  it('turns an engine redirect into an error instead of following it to another host', async () => {
    // The raw client, without the adapter's checks: the root cause of the crash, not its symptom.
    const raw = createDockerClient('/var/run/docker.sock');
    await expect(raw.getImage('x/../../containers/foo').inspect()).rejects.toThrow(/redirect/i);
    await expect(raw.getImage('x%2F..%2F..%2Fcontainers%2Ffoo').inspect()).rejects.toThrow(/redirect/i);
  });

  it('refuses unnamed or malformed images before they reach a URL, and ignores id-prefix matches', async () => {
    await expect(runtime.inspectImage('x/../../containers/foo')).rejects.toThrow(/image/);
    await expect(runtime.pullImage('x/../../containers/foo', () => {})).rejects.toThrow(/image/);
    await expect(runtime.inspectContainer('../../images/x')).rejects.toThrow(/container/);
    await expect(runtime.removeVolume('a/../../b')).rejects.toThrow(/volume/);
    // The engine answers a bare `<12 hex>` by id prefix (verified with curl): never sent.
    await expect(runtime.inspectImage(busyboxId.slice(7, 19))).rejects.toThrow(/id prefix/);
    expect(await runtime.inspectImage(TEST_IMAGE)).toMatchObject({ id: busyboxId });
  });
});
