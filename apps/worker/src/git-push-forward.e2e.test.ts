import { COMPONENT_LABEL, SERVICE_LABEL } from '@hostctl/domain';
import { startGitServer, type GitServer, type TestRepo } from '@hostctl/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import { createRedeployment, httpGet, waitForDeployment } from './testing/fixtures.js';
import { createRepositoryService, deploymentLog } from './testing/repository-fixtures.js';
import { TEST_IMAGE } from './testing/test-env.js';
import { useWorkerApp } from './testing/worker-fixture.js';

// Issue 27 class 2, the worker's half: a push deployment (pinned to the pushed commit, as the API
// queues it) only moves a service forward on its tracked branch. A real git daemon on loopback and
// real builds: an old commit replayed, the running commit again, and a commit of another branch
// are refused at the source step while the running release keeps serving; a commit between what
// runs and the branch's head, and the head itself, deploy.
let server: GitServer;
const { db, runtime, app, created } = useWorkerApp('git-forward', {
  env: { GIT_ALLOWED_HOSTS: '127.0.0.1:32768-60999' },
  app: { observe: false, readiness: { timeoutMs: 20_000, stableMs: 300 } },
  beforeStart: async () => (server = await startGitServer()),
  afterClose: () => server.close(),
});

const page = (text: string) => ({
  Dockerfile: `FROM ${TEST_IMAGE}\nCOPY index.html /www/index.html\nEXPOSE 8080\n`,
  'index.html': text,
});

async function served(serviceId: string): Promise<string> {
  const [web] = await runtime.listContainers({ [SERVICE_LABEL]: serviceId, [COMPONENT_LABEL]: 'web' });
  const state = web ? await runtime.inspectContainer(web.id) : null;
  if (!state?.ip) throw new Error('web container has no address');
  return (await httpGet(state.ip, 8080, '/')).body;
}

async function deployPinned(serviceId: string, commit: string) {
  const id = await createRedeployment(db, serviceId, commit);
  await app.producer.enqueue('deploy', { deploymentId: id });
  return { id, deployment: await waitForDeployment(db, id) };
}

describe('push deployments move a service forward on its branch', () => {
  let repo: TestRepo;
  let serviceId: string;
  const commits: Record<'v1' | 'v2' | 'v3', string> = { v1: '', v2: '', v3: '' };

  beforeAll(async () => {
    repo = await server.repo('forward');
    commits.v1 = await repo.push(page('v1 (vulnerable)'));
    const service = await createRepositoryService(db, { method: 'git', url: repo.url, branch: 'main' });
    created.push(service);
    serviceId = service.serviceId;
    await app.producer.enqueue('deploy', { deploymentId: service.deploymentId });
    expect(await waitForDeployment(db, service.deploymentId)).toMatchObject({
      status: 'succeeded',
      commit: commits.v1,
    });
    commits.v2 = await repo.push(page('v2'));
    commits.v3 = await repo.push(page('v3'));
  });

  it('deploys a commit that is not the head but descends from what runs', async () => {
    const { deployment } = await deployPinned(serviceId, commits.v2);
    expect(deployment).toMatchObject({ status: 'succeeded', commit: commits.v2, error: null });
    expect(await served(serviceId)).toBe('v2');
  });

  it('refuses an old commit replayed, and the running commit again, keeping the release that runs', async () => {
    for (const [commit, why] of [
      [commits.v1, `it does not descend from the running commit ${commits.v2}`],
      [commits.v2, 'it is the commit that runs now'],
    ] as const) {
      const { id, deployment } = await deployPinned(serviceId, commit);
      expect(deployment.status).toBe('failed');
      expect(deployment.error).toBe(
        `source step failed: commit ${commit} refused: ${why}; the head of main is ${commits.v3}, and a push only moves a service forward on its branch`,
      );
      expect(await deploymentLog(db, id)).toContainEqual(expect.stringContaining(`commit ${commit} refused`));
      expect(await served(serviceId)).toBe('v2');
      expect((await db.service.findUniqueOrThrow({ where: { id: serviceId } })).status).toBe('running');
    }
  });

  it('refuses a commit that exists only on another branch, even one built on what runs', async () => {
    // Made from main's head (`checkout -B`), so it descends from the running v2: only the branch tells.
    const elsewhere = await repo.push(page('not main'), 'feature/evil');
    const { deployment } = await deployPinned(serviceId, elsewhere);
    expect(deployment.status).toBe('failed');
    expect(deployment.error).toMatch(new RegExp(`commit ${elsewhere} refused: it is not on branch main;`));
    expect(await served(serviceId)).toBe('v2');
  });

  it('deploys the head of the branch', async () => {
    const { deployment } = await deployPinned(serviceId, commits.v3);
    expect(deployment).toMatchObject({ status: 'succeeded', commit: commits.v3 });
    expect(await served(serviceId)).toBe('v3');
  });
});
