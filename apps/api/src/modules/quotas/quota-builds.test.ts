import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { createHarness, json, uniqueName, type Harness } from '../../test-support/harness.js';

/**
 * Issue 31, the build quotas (docs/quotas.md#builds): a request that starts a build (create,
 * redeploy, PATCH of a git/ai service) is refused while the customer has used its build minutes
 * of the last 24 hours; what does not build passes. The usage view reports builds running and
 * minutes used. The builds' durations are written here as the worker writes them (build_ms,
 * built_at on the deployment).
 */
let h: Harness;
let admin: { auth: string };

beforeAll(async () => {
  h = await createHarness();
  admin = await h.user('admin');
});
afterAll(async () => h?.close());

type Tenant = { customerId: string; auth: string };

async function tenant(overrides: Record<string, number | null>): Promise<Tenant> {
  const customerId = (await h.customer()).id;
  const set = await h.app.inject({
    method: 'PUT',
    url: `/api/customers/${customerId}/quota`,
    headers: { authorization: admin.auth },
    payload: { plan: 'default', overrides },
  });
  expect(set.statusCode).toBe(200);
  return { customerId, auth: (await h.user('operator', customerId)).auth };
}

const createGit = (t: Tenant) =>
  h.app.inject({
    method: 'POST',
    url: '/api/services',
    headers: { authorization: t.auth },
    payload: {
      name: uniqueName('b'),
      customer_id: t.customerId,
      deploy_method: 'git',
      git_url: 'https://git.example.com/acme/app.git',
      git_branch: 'main',
    },
  });

const createCompose = (t: Tenant) =>
  h.app.inject({
    method: 'POST',
    url: '/api/services',
    headers: { authorization: t.auth },
    payload: {
      name: uniqueName('c'),
      customer_id: t.customerId,
      deploy_method: 'compose',
      compose: 'services:\n  web:\n    image: local/busybox:1\n    ports: ["8080"]\n',
    },
  });

/** The service's first deployment, finished by "the worker" after a build of `ms`, `hoursAgo`. */
async function built(response: LightMyRequestResponse, ms: number, hoursAgo = 0) {
  expect(response.statusCode).toBe(201);
  const created = json<{ id: string; deploy_job_id: string }>(response);
  await h.container.db.deployment.update({
    where: { id: created.deploy_job_id },
    data: { status: 'succeeded', buildMs: ms, builtAt: new Date(Date.now() - hoursAgo * 3_600_000) },
  });
  return created.id;
}

const quotaOf = async (t: Tenant) =>
  json<{ limits: Record<string, number | null>; usage: Record<string, number> }>(
    await h.app.inject({
      method: 'GET',
      url: `/api/customers/${t.customerId}/quota`,
      headers: { authorization: t.auth },
    }),
  );

function expectMinutesRefusal(response: LightMyRequestResponse, limit: number, usage: number) {
  expect(response.statusCode).toBe(409);
  expect(json(response)).toMatchObject({
    code: 'quota_exceeded',
    quota: { name: 'build_minutes_per_day', limit, usage, requested: 1 },
    detail: `quota build_minutes_per_day exceeded: the customer uses ${usage} of ${limit} build minutes in the last 24 hours and the request asks for 1 more`,
  });
}

describe('build_minutes_per_day', () => {
  it('the default plan allows 2 builds at once and 120 build minutes a day', async () => {
    const t = await tenant({});
    expect((await quotaOf(t)).limits).toMatchObject({ concurrent_builds: 2, build_minutes_per_day: 120 });
  });

  it('refuses create, redeploy and PATCH of a git service once the minutes are used; compose passes', async () => {
    const t = await tenant({ build_minutes_per_day: 3 });
    // 2 minutes: one left.
    const id = await built(await createGit(t), 120_000);
    expect((await quotaOf(t)).usage.build_minutes_per_day).toBe(2);
    // Half a minute more is a minute begun: 3 of 3.
    await built(await createGit(t), 30_000);
    expect((await quotaOf(t)).usage.build_minutes_per_day).toBe(3);

    expectMinutesRefusal(await createGit(t), 3, 3);
    expectMinutesRefusal(
      await h.app.inject({
        method: 'POST',
        url: `/api/services/${id}/redeploy`,
        headers: { authorization: t.auth },
      }),
      3,
      3,
    );
    expectMinutesRefusal(
      await h.app.inject({
        method: 'PATCH',
        url: `/api/services/${id}`,
        headers: { authorization: t.auth },
        payload: { variables: { GREETING: 'hello' } },
      }),
      3,
      3,
    );
    // A compose service builds nothing.
    expect((await createCompose(t)).statusCode).toBe(201);

    // Unlimited, explicitly, for this customer: the build goes through.
    await h.app.inject({
      method: 'PUT',
      url: `/api/customers/${t.customerId}/quota`,
      headers: { authorization: admin.auth },
      payload: { plan: 'default', overrides: { build_minutes_per_day: null } },
    });
    expect((await createGit(t)).statusCode).toBe(201);
  });

  it('is a rolling 24 hours: builds that ended before it do not count', async () => {
    const t = await tenant({ build_minutes_per_day: 1 });
    await built(await createGit(t), 600_000, 25);
    expect((await quotaOf(t)).usage.build_minutes_per_day).toBe(0);
    await built(await createGit(t), 1_000, 23);
    expectMinutesRefusal(await createGit(t), 1, 1);
  });

  it("counts only the customer's own builds", async () => {
    const busy = await tenant({ build_minutes_per_day: 1 });
    const other = await tenant({ build_minutes_per_day: 1 });
    await built(await createGit(busy), 60_000);
    expectMinutesRefusal(await createGit(busy), 1, 1);
    expect((await createGit(other)).statusCode).toBe(201);
  });
});

describe('concurrent_builds usage', () => {
  it('counts running git/ai deployments until their build ends; never refused at the API', async () => {
    const t = await tenant({ concurrent_builds: 1 });
    const first = json<{ id: string; deploy_job_id: string }>(await createGit(t));
    const second = json<{ id: string; deploy_job_id: string }>(await createGit(t));
    const db = h.container.db;
    await db.deployment.update({ where: { id: first.deploy_job_id }, data: { status: 'running' } });
    await db.deployment.update({
      where: { id: second.deploy_job_id },
      data: { status: 'running', step: 'build' },
    });
    expect((await quotaOf(t)).usage.concurrent_builds).toBe(2);
    // Past its build (validate, pull, release...) a deployment builds no more.
    await db.deployment.update({ where: { id: second.deploy_job_id }, data: { step: 'pull' } });
    expect((await quotaOf(t)).usage.concurrent_builds).toBe(1);
    // At its limit the customer may still ask for builds: they wait in the worker's queue.
    expect((await createGit(t)).statusCode).toBe(201);
  });
});
