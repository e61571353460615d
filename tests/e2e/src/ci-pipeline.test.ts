import { createHmac, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, keyringFromEnvironment, type Db } from '@hostctl/db';
import { apiClient } from '@hostctl/testing';
import { operatorApi } from './release-fixtures.js';
import { E2E_DATABASE_URL, TEST_IMAGE } from './env.js';
import { startGitServer, type GitServer, type TestRepo } from '@hostctl/testing';
import { startNotificationReceiver, type NotificationReceiver } from './notification-receiver.js';
import { hostctlProcess } from './cli-process.js';
import { startStack, type Stack } from './stack.js';

/**
 * A CI pipeline against the real stack (issue 15, docs/ci.md, docs/webhooks.md): the developer
 * pushes to a local git server, the test plays the forge and posts a GitHub-signed push payload to
 * the service's hook, the worker deploys exactly that commit, and `hostctl deploy --wait` exits
 * with the outcome: 0 for a good head, 1 for a broken one, 3 when the wait is shorter than the
 * deploy, 5 for a token limited to another service. The team's receiver gets a signed notification
 * of each pushed deployment's outcome.
 */
const suffix = Date.now().toString(36);
const site = (text: string) => ({
  Dockerfile: `FROM ${TEST_IMAGE}\nCOPY index.html /www/index.html\nEXPOSE 8080\nCMD ["httpd", "-f", "-p", "8080", "-h", "/www"]\n`,
  'index.html': text,
});
const BROKEN = { Dockerfile: `FROM ${TEST_IMAGE}\nRUN echo broken build && exit 3\n` };

let stack: Stack;
let git: GitServer;
let repo: TestRepo;
let db: Db;
let operatorKey: string;
let otherServiceKey: string;
let serviceId: string;
let otherServiceId: string;
let firstDeployment: string;
let hook: { url: string; secret: string };
let receiver: NotificationReceiver;

/** `hostctl` as a CI job runs it: HOSTCTL_URL and HOSTCTL_TOKEN, nothing stored. */
const hostctl = (token: string, ...args: string[]) =>
  hostctlProcess({ apiUrl: stack.apiUrl, token }, ...args);

/** What GitHub sends for a push: the JSON body and its HMAC-SHA256 under the hook's secret. */
async function githubPush(commit: string, branch = 'main'): Promise<Response> {
  const body = JSON.stringify({
    ref: `refs/heads/${branch}`,
    before: '0'.repeat(40),
    after: commit,
    repository: { full_name: 'e2e/site', default_branch: 'main' },
    head_commit: { id: commit, message: 'e2e' },
  });
  const signature = createHmac('sha256', hook.secret).update(body).digest('hex');
  return fetch(hook.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-github-event': 'push',
      'x-github-delivery': randomUUID(),
      'x-hub-signature-256': `sha256=${signature}`,
    },
    body,
  });
}

interface Deployment {
  id: string;
  status: string;
  commit: string | null;
  error?: string | null;
}

async function finalDeployment(id: string): Promise<Deployment> {
  const api = apiClient(stack.apiUrl, operatorKey);
  for (;;) {
    const { body } = await api.get<Deployment>(`/api/deployments/${id}?wait=60`);
    if (!['queued', 'running'].includes(body.status)) return body;
  }
}

beforeAll(async () => {
  git = await startGitServer();
  repo = await git.repo(`site-${suffix}`);
  await repo.push(site('v1'));
  // The team's receiver listens on loopback: the operator opens the ephemeral ports to receivers.
  stack = await startStack({ extraEnv: { NOTIFICATION_ALLOWED_HOSTS: '127.0.0.1:32768-60999' } });
  db = createDatabase({ url: E2E_DATABASE_URL, keys: keyringFromEnvironment(process.env) }).db;
  const operator = await operatorApi(stack, 'ci');
  const { api, customerId } = operator;
  operatorKey = operator.key;
  const newKey = () => stack.cli('api-keys', 'create', '--email', operator.email, '--name', 'ci');

  const created = await api.post<{ id: string; deploy_job_id: string }>('/api/services', {
    name: `ci-${suffix}`,
    customer_id: customerId,
    deploy_method: 'git',
    git_url: repo.url,
    git_branch: 'main',
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  serviceId = created.body.id;
  // The other service is only a key's limit: a row, never deployed (the worker stays on the pipeline).
  const other = await db.service.create({
    data: {
      name: `ci-other-${suffix}`,
      customerId,
      status: 'stopped',
      deployMethod: 'compose',
      url: `http://ci-other-${suffix}.invalid`,
    },
  });
  otherServiceId = other.id;
  // A deploy token limited to the other service: what a second pipeline of the same team holds.
  const limited = await newKey();
  await db.apiKey.update({
    where: { id: limited.id as string },
    data: { serviceId: other.id, customerId, actions: ['read', 'deploy'] },
  });
  otherServiceKey = limited.key as string;

  const webhook = await api.post<{ url: string; secret: string }>(`/api/services/${serviceId}/webhook`);
  expect(webhook.status).toBe(201);
  hook = webhook.body;
  receiver = await startNotificationReceiver();
  const subscription = await api.post<{ secret: string }>('/api/notification-subscriptions', {
    url: receiver.url,
    events: ['deployment.succeeded', 'deployment.failed'],
  });
  expect(subscription.status, JSON.stringify(subscription.body)).toBe(201);
  receiver.secret = subscription.body.secret;
  firstDeployment = created.body.deploy_job_id;
  // Starting two tsx processes dominates on a loaded 2-core machine (stack.ts waits up to 180 s).
}, 300_000);

afterAll(async () => {
  await stack?.stop();
  await db?.$disconnect();
  await git?.close();
  await receiver?.close();
});

describe('a pipeline driven by pushes', () => {
  it('a signed push redeploys exactly the pushed commit, even after the branch moved on', async () => {
    expect((await finalDeployment(firstDeployment)).status).toBe('succeeded');
    const pushed = await repo.push(site('v2'));
    // Another push lands before the forge's delivery of the first one arrives.
    const head = await repo.push(site('v3'));
    const response = await githubPush(pushed);
    expect(response.status).toBe(202);
    const answer = (await response.json()) as { outcome: string; deployment_id: string; commit: string };
    expect(answer).toMatchObject({ outcome: 'deployed', commit: pushed });
    const deployment = await finalDeployment(answer.deployment_id);
    expect(deployment).toMatchObject({ status: 'succeeded', commit: pushed });
    expect(deployment.commit).not.toBe(head);

    const succeeded = await receiver.waitFor((n) => n.body.deployment?.id === answer.deployment_id);
    expect(succeeded).toMatchObject({ event: 'deployment.succeeded', verified: true });
    expect(succeeded.deliveryId).not.toBe('');

    const deliveries = await apiClient(stack.apiUrl, operatorKey).get<{
      data: { outcome: string; commit: string }[];
    }>(`/api/services/${serviceId}/webhook-deliveries`);
    expect(deliveries.body.data[0]).toMatchObject({ outcome: 'deployed', commit: pushed });
  });

  it('hostctl deploy --wait exits 0 when the head is good', async () => {
    const result = await hostctl(operatorKey, 'deploy', serviceId, '--wait', '--timeout', '120', '--json');
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'succeeded' });
  });

  it('a broken commit: the pushed deployment fails and hostctl deploy --wait exits 1', async () => {
    const broken = await repo.push(BROKEN);
    const answer = (await (await githubPush(broken)).json()) as { deployment_id: string };
    const deployment = await finalDeployment(answer.deployment_id);
    expect(deployment).toMatchObject({ status: 'failed', commit: broken });

    const failed = await receiver.waitFor((n) => n.body.deployment?.id === answer.deployment_id);
    expect(failed).toMatchObject({ event: 'deployment.failed', verified: true });

    const result = await hostctl(operatorKey, 'deploy', serviceId, '--wait', '--timeout', '120');
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain('broken build');
  });

  it('hostctl deploy --wait exits 3 when the wait is shorter than the deploy, which goes on', async () => {
    await repo.push(site('v4'));
    const result = await hostctl(operatorKey, 'deploy', serviceId, '--wait', '--timeout', '0', '--json');
    expect(result.code, result.stderr).toBe(3);
    const { id } = JSON.parse(result.stdout) as { id: string };
    const api = apiClient(stack.apiUrl, operatorKey);
    expect((await api.get<Deployment>(`/api/deployments/${id}`)).body.status).toMatch(/^(queued|running)$/);
    // Seen going on; cancelled rather than waited for, to keep the suite short.
    expect((await api.post(`/api/deployments/${id}/cancel`)).status).toBe(200);
  });

  it('hostctl deploy --wait exits 5 with a token limited to another service', async () => {
    const result = await hostctl(otherServiceKey, 'deploy', serviceId, '--wait');
    expect(result.code, result.stderr).toBe(5);
    expect(result.stderr).not.toContain(otherServiceKey);
  });

  it('deletes what it created', async () => {
    const api = apiClient(stack.apiUrl, operatorKey);
    for (const id of [serviceId, otherServiceId])
      expect((await api.delete(`/api/services/${id}`)).status).toBe(204);
  });
});
