import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, json, type Harness } from '../../test-support/harness.js';
import {
  SIGNERS,
  deliver,
  deliverUnsigned,
  gitServiceWithHook,
  pushBody,
  randomSha,
  type TestHook,
} from '../../test-support/push-deliveries.js';

// Issue 27 class 2, from the attacker's side: a captured signed delivery is sent again under a new
// delivery id, relabelled as another forge, or after a flood of unsigned posts; and a push reaches
// a service its owner stopped. None of it may queue a deployment (docs/webhooks.md). No worker
// runs: "it ran" is the deployment row the worker would have left. The limit is high so that every
// unsigned post of the flood reaches the delivery log, which is what used to evict the dedup record.
let h: Harness;
let admin: { auth: string };
let customerId: string;

beforeAll(async () => {
  h = await createHarness({ GIT_ALLOWED_HOSTS: '127.0.0.1:40000', WEBHOOK_RATE_LIMIT_PER_MINUTE: '1000' });
  admin = await h.user('admin');
  customerId = (await h.customer()).id;
});
afterAll(async () => h.close());

const pushDeployments = (serviceId: string, commit: string) =>
  h.container.db.deployment.count({ where: { serviceId, requestedCommit: commit } });

/** A signed push that deployed, and the worker finished it: the captured delivery of the attack. */
async function deployedPush(hook: TestHook) {
  const commit = randomSha();
  const body = pushBody('main', commit);
  const headers = SIGNERS.github(hook.secret, body, randomUUID());
  const first = await deliver(h, hook.id, body, headers);
  expect(json(first)).toMatchObject({ outcome: 'deployed', commit });
  const deploymentId = json<{ deployment_id: string }>(first).deployment_id;
  await h.container.db.deployment.update({
    where: { id: deploymentId },
    data: { status: 'succeeded', finishedAt: new Date() },
  });
  await h.container.db.service.update({ where: { id: hook.serviceId }, data: { status: 'running' } });
  return { commit, body, headers, deploymentId };
}

describe('a captured signed delivery sent again', () => {
  it('under a new delivery id is a duplicate: 202 ignored, nothing queued', async () => {
    const hook = await gitServiceWithHook(h, admin.auth, customerId);
    const captured = await deployedPush(hook);
    const replay = await deliver(h, hook.id, captured.body, {
      ...captured.headers,
      'x-github-delivery': randomUUID(),
    });
    expect(replay.statusCode).toBe(202);
    expect(json(replay)).toEqual({
      outcome: 'ignored',
      message: 'ignored: duplicate: this signed body was received before',
      deployment_id: captured.deploymentId,
    });
    expect(await pushDeployments(hook.serviceId, captured.commit)).toBe(1);
  });

  it.each(['gitea', 'forgejo'] as const)(
    'relabelled from GitHub to %s (same HMAC) is a duplicate',
    async (forge) => {
      const hook = await gitServiceWithHook(h, admin.auth, customerId);
      const captured = await deployedPush(hook);
      const relabelled = await deliver(
        h,
        hook.id,
        captured.body,
        SIGNERS[forge](hook.secret, captured.body, randomUUID()),
      );
      expect(relabelled.statusCode).toBe(202);
      expect(json(relabelled)).toMatchObject({
        outcome: 'ignored',
        message: expect.stringMatching(/duplicate/),
      });
      expect(await pushDeployments(hook.serviceId, captured.commit)).toBe(1);
    },
  );

  it('after 205 unsigned posts is still a duplicate, and the log still shows the real delivery', async () => {
    const hook = await gitServiceWithHook(h, admin.auth, customerId);
    const captured = await deployedPush(hook);
    for (let i = 0; i < 205; i++) {
      const flood = await deliverUnsigned(h, hook.id, pushBody('main', randomSha()));
      expect(flood.statusCode).toBe(401);
    }
    for (const deliveryId of [captured.headers['x-github-delivery'], randomUUID()]) {
      const replay = await deliver(h, hook.id, captured.body, {
        ...captured.headers,
        'x-github-delivery': deliveryId,
      });
      expect(json(replay)).toMatchObject({ outcome: 'ignored', message: expect.stringMatching(/duplicate/) });
    }
    expect(await pushDeployments(hook.serviceId, captured.commit)).toBe(1);
    const log = await h.app.inject({
      method: 'GET',
      url: `/api/services/${hook.serviceId}/webhook-deliveries?per_page=100`,
      headers: { authorization: admin.auth },
    });
    const outcomes = json<{ data: { outcome: string; deployment_id: string | null }[] }>(log).data;
    expect(outcomes).toContainEqual(
      expect.objectContaining({ outcome: 'deployed', deployment_id: captured.deploymentId }),
    );
  });

  it('a body first ignored (untracked branch) stays a duplicate once the branch is tracked', async () => {
    const hook = await gitServiceWithHook(h, admin.auth, customerId);
    const body = pushBody('release', randomSha());
    const headers = SIGNERS.github(hook.secret, body, randomUUID());
    expect(json(await deliver(h, hook.id, body, headers))).toMatchObject({
      message: 'ignored: branch release is not tracked',
    });
    await h.container.db.service.update({ where: { id: hook.serviceId }, data: { gitBranch: 'release' } });
    const replay = await deliver(h, hook.id, body, { ...headers, 'x-github-delivery': randomUUID() });
    expect(json(replay)).toMatchObject({ outcome: 'ignored', message: expect.stringMatching(/duplicate/) });
    expect(await pushDeployments(hook.serviceId, JSON.parse(body).after as string)).toBe(0);
  });
});

describe('a push to a stopped service', () => {
  it('is 202 ignored naming the stop; nothing is queued and the service stays stopped', async () => {
    const hook = await gitServiceWithHook(h, admin.auth, customerId);
    await deployedPush(hook);
    // What POST /stop leaves once the worker has stopped the containers.
    await h.container.db.service.update({ where: { id: hook.serviceId }, data: { status: 'stopped' } });
    const commit = randomSha();
    const body = pushBody('main', commit);
    const response = await deliver(h, hook.id, body, SIGNERS.github(hook.secret, body, randomUUID()));
    expect(response.statusCode).toBe(202);
    expect(json(response)).toEqual({
      outcome: 'ignored',
      message: 'ignored: the service is stopped: a push never starts it (start it, then push or redeploy)',
    });
    expect(await pushDeployments(hook.serviceId, commit)).toBe(0);
    const service = await h.container.db.service.findUniqueOrThrow({ where: { id: hook.serviceId } });
    expect(service.status).toBe('stopped');
  });
});
