import { COMPONENT_LABEL, OWNER_LABEL, SERVICE_LABEL } from '@hostctl/domain';
import { describe, expect, it } from 'vitest';
import { noopRouter } from './adapters/router.js';
import { removeAll } from './runtime/engine-objects.js';
import { createRedeployment, httpGet, waitForDeployment } from './testing/fixtures.js';
import { startGitServer, type GitServer } from '@hostctl/testing';
import { createRepositoryService, deploymentLog } from './testing/repository-fixtures.js';
import { TEST_IMAGE } from './testing/test-env.js';
import { useWorkerApp } from './testing/worker-fixture.js';

// git and ai deployments end to end: a real git daemon on loopback, real clones and builds on the
// Docker engine. 127.0.0.1 is allowlisted, which is what lets git:// and a loopback host through.
let server: GitServer;
const { prefix, db, runtime, app, created } = useWorkerApp('git', {
  env: {
    GIT_ALLOWED_HOSTS: '127.0.0.1:32768-60999',
    AI_BASE_IMAGE_STATIC: TEST_IMAGE,
    // Built by the stack scripts from this machine's Node.js (scripts/lib/docker.sh): no registry
    // outside is reachable, and the ai method must work offline in the dev stack.
    AI_BASE_IMAGE_NODE: 'local/node:20',
  },
  app: { observe: false, readiness: { timeoutMs: 20_000, stableMs: 300 } },
  beforeStart: async () => (server = await startGitServer()),
  afterClose: () => server.close(),
});

const page = (text: string) => ({
  Dockerfile: `FROM ${TEST_IMAGE}\nCOPY index.html /www/index.html\nEXPOSE 8080\n`,
  'index.html': text,
});

async function deploy(input: Parameters<typeof createRepositoryService>[1]) {
  const service = await createRepositoryService(db, input);
  created.push(service);
  await app.producer.enqueue('deploy', { deploymentId: service.deploymentId });
  return { service, deployment: await waitForDeployment(db, service.deploymentId) };
}

async function served(serviceId: string, port = 8080): Promise<string> {
  const [web] = await runtime.listContainers({ [SERVICE_LABEL]: serviceId, [COMPONENT_LABEL]: 'web' });
  const state = web ? await runtime.inspectContainer(web.id) : null;
  if (!state?.ip) throw new Error('web container has no address');
  return (await httpGet(state.ip, port, '/')).body;
}

describe('git deployments', () => {
  it('builds the default branch, serves it, and a redeploy builds the new head', async () => {
    const repo = await server.repo('site');
    const v1 = await repo.push(page('v1 from git'));
    const { service, deployment } = await deploy({ method: 'git', url: repo.url });
    expect(deployment).toMatchObject({ status: 'succeeded', commit: v1, error: null });
    expect(await served(service.serviceId)).toBe('v1 from git');
    const log = await deploymentLog(db, service.deploymentId);
    expect(log).toContain(`Resolved ${repo.url} main to ${v1}`);
    expect(log).toContain(`Step 1/5 : FROM ${TEST_IMAGE}`);
    expect(log).toContain(
      `Successfully tagged hostctl/${service.serviceId.replace(/-/g, '').slice(0, 12)}:${v1}`,
    );
    expect(deployment.plan).toMatchObject({
      containers: [
        { name: 'web', image: `hostctl/${service.serviceId.replace(/-/g, '').slice(0, 12)}:${v1}` },
      ],
      web: { container: 'web', port: 8080 },
      source: { url: repo.url, branch: 'main', commit: v1, analysis: { stack: 'dockerfile' } },
    });
    // The service shows the definition that runs: built image, no build section.
    const row = await db.service.findUniqueOrThrow({ where: { id: service.serviceId } });
    expect(row.compose).toContain(`image: hostctl/`);
    expect(row.compose).not.toContain('build:');

    const v2 = await repo.push({ 'index.html': 'v2 from git' });
    const redeployId = await createRedeployment(db, service.serviceId);
    await app.producer.enqueue('deploy', { deploymentId: redeployId });
    const redeploy = await waitForDeployment(db, redeployId);
    expect(redeploy).toMatchObject({ status: 'succeeded', commit: v2 });
    expect(redeploy.commit).not.toBe(v1);
    expect(await served(service.serviceId)).toBe('v2 from git');

    // Deleting the service also removes the images built for it.
    const builtBy = { [OWNER_LABEL]: 'true', [SERVICE_LABEL]: service.serviceId };
    expect((await runtime.listImages(builtBy)).length).toBeGreaterThan(0);
    await removeAll({ runtime, router: noopRouter, instance: prefix }, service.serviceId);
    expect(await runtime.listImages(builtBy)).toEqual([]);
  });

  it('deploys the branch it is given', async () => {
    const repo = await server.repo('branches');
    await repo.push(page('from main'));
    const release = await repo.push(page('from release'), 'release/1');
    const { service, deployment } = await deploy({ method: 'git', url: repo.url, branch: 'release/1' });
    expect(deployment).toMatchObject({ status: 'succeeded', commit: release });
    expect(await served(service.serviceId)).toBe('from release');
  });

  it('fails with the build error in the log and on the deployment', async () => {
    const repo = await server.repo('broken');
    await repo.push({ Dockerfile: `FROM ${TEST_IMAGE}\nRUN echo building && exit 3\n` });
    const { service, deployment } = await deploy({ method: 'git', url: repo.url });
    expect(deployment.status).toBe('failed');
    expect(deployment.error).toMatch(
      /^build step failed: building hostctl\/\w+:[0-9a-f]{40} failed: .*non-zero code: 3/,
    );
    const log = await deploymentLog(db, service.deploymentId);
    expect(log).toContain('building');
    expect(log.some((line) => /returned a non-zero code: 3/.test(line))).toBe(true);
    expect((await db.service.findUniqueOrThrow({ where: { id: service.serviceId } })).status).toBe('failed');
  });

  it('fails at once for a missing branch, a repository without a Dockerfile and a refused host', async () => {
    const repo = await server.repo('plain');
    await repo.push({ 'README.md': 'nothing to build' });
    const missing = await deploy({ method: 'git', url: repo.url, branch: 'nope' });
    expect(missing.deployment.error).toMatch(/branch nope does not exist/);
    const plain = await deploy({ method: 'git', url: repo.url });
    expect(plain.deployment.error).toMatch(/no Dockerfile or compose file/);
    // localhost is not allowlisted here: refused before git runs, whatever listens there.
    const refused = await deploy({ method: 'git', url: `https://localhost:${server.port}/plain.git` });
    expect(refused.deployment).toMatchObject({ status: 'failed', commit: null });
    expect(refused.deployment.error).toMatch(
      /^source step failed: repository URL refused: it points at localhost/,
    );
  });

  it('builds a compose file from the repository, with its build contexts', async () => {
    const repo = await server.repo('compose');
    const commit = await repo.push({
      'compose.yaml': `services:\n  web:\n    build: ./site\n    ports: ["8080"]\n    environment:\n      GREETING: \${GREETING}\n  helper:\n    image: ${TEST_IMAGE}\n    command: ["sleep", "3600"]\n`,
      'site/Dockerfile': `FROM ${TEST_IMAGE}\nCOPY index.html /www/index.html\n`,
      'site/index.html': 'from compose',
    });
    const { service, deployment } = await deploy({
      method: 'git',
      url: repo.url,
      variables: { GREETING: 'planted-greeting-value' },
    });
    expect(deployment).toMatchObject({ status: 'succeeded', commit });
    expect(deployment.plan).toMatchObject({
      source: { analysis: { stack: 'compose', composeFile: 'compose.yaml' } },
    });
    expect(await served(service.serviceId)).toBe('from compose');
    // The published compose, on the service and on the release, names the variable, never its
    // value: variables are sealed at rest (docs/secrets.md#what-is-encrypted).
    const row = await db.service.findUniqueOrThrow({ where: { id: service.serviceId } });
    const release = await db.deployment.findUniqueOrThrow({ where: { id: deployment.id } });
    for (const text of [row.compose, release.sourceCompose ?? '']) {
      expect(text).toMatch(/GREETING: \$\{GREETING\}/);
      expect(text).not.toContain('planted-greeting-value');
    }
  });
});

describe('ai deployments', () => {
  it('works out that index.html is a static site, generates a Dockerfile and serves the page', async () => {
    const repo = await server.repo('static-site');
    await repo.push({ 'index.html': '<h1>static via ai</h1>' });
    const { service, deployment } = await deploy({ method: 'ai', url: repo.url });
    expect(deployment).toMatchObject({ status: 'succeeded', error: null });
    expect(await served(service.serviceId)).toBe('<h1>static via ai</h1>');
    expect(deployment.plan).toMatchObject({
      web: { container: 'web', port: 8080 },
      source: {
        analysis: {
          stack: 'static',
          planner: 'deterministic',
          reasons: expect.arrayContaining([expect.stringMatching(/index\.html found/)]),
          generatedFiles: [
            { path: '.hostctl.Dockerfile', content: expect.stringContaining(`FROM ${TEST_IMAGE}`) },
          ],
        },
      },
    });
    const row = await db.service.findUniqueOrThrow({ where: { id: service.serviceId } });
    expect(row.compose).toMatch(/image: hostctl\/\w+:[0-9a-f]{40}/);
  });

  it('builds a Node.js repository on the stack’s local node image and serves it', async () => {
    const repo = await server.repo('node-app');
    await repo.push({
      'package.json': JSON.stringify({ name: 'hello-node', scripts: { start: 'node server.js' } }),
      'server.js':
        "require('http').createServer((q, s) => s.end('node ' + process.version)).listen(process.env.PORT);\n",
    });
    const { service, deployment } = await deploy({ method: 'ai', url: repo.url });
    expect(deployment).toMatchObject({ status: 'succeeded', error: null });
    expect(deployment.plan).toMatchObject({ web: { port: 3000 }, source: { analysis: { stack: 'node' } } });
    expect(await served(service.serviceId, 3000)).toMatch(/^node v\d+/);
  });
});
