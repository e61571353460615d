import { randomUUID } from 'node:crypto';
import Docker from 'dockerode';
import { QUEUES } from '@hostctl/queue';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDockerRuntime } from './adapters/docker-runtime.js';
import { noopRouter } from './adapters/router.js';
import { removeAll } from './processors/delete.processor.js';
import {
  createTestDb,
  deleteServiceRows,
  silentLogger,
  testConfig,
  uniquePrefix,
  waitForDeployment,
  type CreatedService,
} from './testing/fixtures.js';
import { startGitServer, type GitServer } from './testing/git-server.js';
import { createRepositoryService, deploymentLog } from './testing/repository-fixtures.js';
import { TEST_IMAGE } from './testing/test-env.js';
import { createWorkerApp } from './worker-app.js';

// A repository is tenant input too: its Dockerfile's FROM and its compose file's images pass the
// same image policy before the engine builds or pulls anything. Real git daemon and engine.
const prefix = uniquePrefix('git-images');
const db = createTestDb();
const docker = new Docker({ socketPath: '/var/run/docker.sock' });
const runtime = createDockerRuntime({ socketPath: '/var/run/docker.sock' });
const app = createWorkerApp(testConfig(prefix, { GIT_ALLOWED_HOSTS: '127.0.0.1:32768-60999' }), {
  logger: silentLogger,
  reconcile: false,
  observe: false,
  readiness: { timeoutMs: 20_000, stableMs: 300 },
});
const created: CreatedService[] = [];
const foreignBuild = `hostctl/${randomUUID().replace(/-/g, '').slice(0, 12)}:${'cd'.repeat(20)}`;
let server: GitServer;

beforeAll(async () => {
  server = await startGitServer();
  await app.start();
  const [repo, tag] = foreignBuild.split(':') as [string, string];
  await docker.getImage(TEST_IMAGE).tag({ repo, tag });
});

afterAll(async () => {
  for (const item of created)
    await removeAll({ runtime, router: noopRouter, instance: prefix }, item.serviceId).catch(() => undefined);
  await deleteServiceRows(db, created);
  await docker
    .getImage(foreignBuild)
    .remove({ noprune: true })
    .catch(() => undefined);
  for (const name of Object.values(QUEUES)) await app.producer.queue(name).obliterate({ force: true });
  await app.close(5000);
  await server.close();
  await db.$disconnect();
});

describe('repository images', () => {
  it.each([
    ['FROM another service’s build', { Dockerfile: `FROM ${foreignBuild}\nEXPOSE 8080\n` }, /reserved/],
    [
      'COPY --from another service’s build',
      { Dockerfile: `FROM ${TEST_IMAGE}\nCOPY --from=${foreignBuild} /www /www\n` },
      // Copying from any image (not only a reserved one) is refused: it is a pull past FROM's check.
      /names no earlier build stage/,
    ],
    ['FROM Caddy admin', { Dockerfile: 'FROM 127.0.0.1:2019/x/y:1\n' }, /control-plane endpoint/],
    [
      'FROM through a global ARG',
      { Dockerfile: 'ARG REG=localhost:8081\nFROM ${REG}/x:1\n' },
      /control-plane endpoint/,
    ],
    ['FROM an unresolvable variable', { Dockerfile: 'FROM ${BASE}\n' }, /uses a variable without a value/],
    ['FROM an unlisted host-less image', { Dockerfile: 'FROM alpine:3.20\n' }, /platform image/],
    [
      'a compose file naming Caddy admin',
      { 'compose.yaml': 'services:\n  web:\n    image: "127.0.0.1:2019/x:1"\n' },
      /control-plane endpoint/,
    ],
    [
      'a compose file naming another service’s build',
      { 'compose.yaml': `services:\n  web:\n    image: "${foreignBuild}"\n` },
      /reserved/,
    ],
  ])('%s fails before anything is built or pulled', async (_label, files, reason) => {
    const repo = await server.repo(`hostile-${randomUUID().slice(0, 6)}`);
    await repo.push(files);
    const service = await createRepositoryService(db, { method: 'git', url: repo.url });
    created.push(service);
    await app.producer.enqueue('deploy', { deploymentId: service.deploymentId });
    const deployment = await waitForDeployment(db, service.deploymentId);
    expect(deployment.status).toBe('failed');
    expect(deployment.error).toMatch(reason);
    const log = (await deploymentLog(db, service.deploymentId)).join('\n');
    expect(log).not.toMatch(/Step 1\/|Pulling|Successfully built/);
  });
});
