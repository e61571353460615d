import { randomUUID } from 'node:crypto';
import Docker from 'dockerode';
import { describe, expect, it } from 'vitest';
import { waitForDeployment } from './testing/fixtures.js';
import { startGitServer, type GitServer } from '@hostctl/testing';
import { createRepositoryService, deploymentLog } from './testing/repository-fixtures.js';
import { TEST_IMAGE } from './testing/test-env.js';
import { useWorkerApp } from './testing/worker-fixture.js';

// A repository is tenant input too: its Dockerfile's FROM and its compose file's images pass the
// same image policy before the engine builds or pulls anything. Real git daemon and engine.
const docker = new Docker({ socketPath: '/var/run/docker.sock' });
const foreignBuild = `hostctl/${randomUUID().replace(/-/g, '').slice(0, 12)}:${'cd'.repeat(20)}`;
let server: GitServer;
const { db, app, created } = useWorkerApp('git-images', {
  env: { GIT_ALLOWED_HOSTS: '127.0.0.1:32768-60999' },
  app: { observe: false, readiness: { timeoutMs: 20_000, stableMs: 300 } },
  beforeStart: async () => (server = await startGitServer()),
  afterStart: async () => {
    const [repo, tag] = foreignBuild.split(':') as [string, string];
    await docker.getImage(TEST_IMAGE).tag({ repo, tag });
  },
  cleanup: () =>
    docker
      .getImage(foreignBuild)
      .remove({ noprune: true })
      .catch(() => undefined),
  afterClose: () => server.close(),
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
