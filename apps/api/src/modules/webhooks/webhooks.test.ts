import { createHmac, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, json, type Harness } from '../../test-support/harness.js';

// Push webhooks from the forge's side (docs/webhooks.md): each provider's signature scheme, what a
// sender with the wrong secret or a tampered body gets, redeliveries, and branch filtering. No
// worker runs here: a delivery that deploys leaves a queued deployment pinned to its commit.
let h: Harness;
let admin: { auth: string };
let customerId: string;

beforeAll(async () => {
  h = await createHarness({ GIT_ALLOWED_HOSTS: '127.0.0.1:40000' });
  admin = await h.user('admin');
  customerId = (await h.customer()).id;
});
afterAll(async () => h.close());

async function gitService(branch: string | null = 'main'): Promise<string> {
  return (
    await h.createService(admin.auth, {
      customer_id: customerId,
      deploy_method: 'git',
      git_url: 'git://127.0.0.1:40000/repo.git',
      ...(branch ? { git_branch: branch } : {}),
    })
  ).id;
}

async function createHook(serviceId: string): Promise<{ id: string; url: string; secret: string }> {
  const response = await h.app.inject({
    method: 'POST',
    url: `/api/services/${serviceId}/webhook`,
    headers: { authorization: admin.auth },
  });
  expect(response.statusCode).toBe(201);
  const body = json<{ url: string; secret: string }>(response);
  return { ...body, id: new URL(body.url).pathname.split('/').pop()! };
}

const sha = () => createHmac('sha1', randomUUID()).digest('hex');
const pushBody = (branch: string, commit: string) =>
  JSON.stringify({ ref: `refs/heads/${branch}`, after: commit, repository: { default_branch: 'main' } });
const hex = (secret: string, body: string) => createHmac('sha256', secret).update(body).digest('hex');

type Signer = (secret: string, body: string, deliveryId: string) => Record<string, string>;
const PROVIDERS: Record<string, Signer> = {
  github: (secret, body, id) => ({
    'x-github-event': 'push',
    'x-github-delivery': id,
    'x-hub-signature-256': `sha256=${hex(secret, body)}`,
  }),
  gitlab: (secret, _body, id) => ({
    'x-gitlab-event': 'Push Hook',
    'x-gitlab-event-uuid': id,
    'x-gitlab-token': secret,
  }),
  gitea: (secret, body, id) => ({
    'x-gitea-event': 'push',
    'x-gitea-delivery': id,
    'x-gitea-signature': hex(secret, body),
  }),
  forgejo: (secret, body, id) => ({
    // Forgejo sends Gitea's headers too; its own signature decides.
    'x-forgejo-event': 'push',
    'x-forgejo-delivery': id,
    'x-forgejo-signature': hex(secret, body),
    'x-gitea-event': 'push',
  }),
};

function deliver(hookId: string, body: string, headers: Record<string, string>) {
  return h.app.inject({
    method: 'POST',
    url: `/hooks/push/${hookId}`,
    headers: { 'content-type': 'application/json', ...headers },
    payload: body,
  });
}

async function deliveries(serviceId: string) {
  const response = await h.app.inject({
    method: 'GET',
    url: `/api/services/${serviceId}/webhook-deliveries`,
    headers: { authorization: admin.auth },
  });
  expect(response.statusCode).toBe(200);
  return json<{ data: Record<string, unknown>[]; total: number }>(response);
}

describe.each(Object.entries(PROVIDERS))('%s signatures', (_provider, sign) => {
  let serviceId: string;
  let hook: { id: string; secret: string };
  beforeAll(async () => {
    serviceId = await gitService();
    hook = await createHook(serviceId);
  });

  it('a valid push to the tracked branch queues a redeploy pinned to that commit', async () => {
    const commit = sha();
    const body = pushBody('main', commit);
    const response = await deliver(hook.id, body, sign(hook.secret, body, randomUUID()));
    expect(response.statusCode).toBe(202);
    const answer = json<{ outcome: string; deployment_id: string; commit: string }>(response);
    expect(answer).toMatchObject({ outcome: 'deployed', commit });
    const deployment = await h.container.db.deployment.findUniqueOrThrow({
      where: { id: answer.deployment_id },
    });
    expect(deployment).toMatchObject({ serviceId, trigger: 'redeploy', requestedCommit: commit, commit });
    await h.container.audit.flush();
    const audited = await h.app.inject({
      method: 'GET',
      url: `/api/audit-events?actor_webhook_id=${hook.id}&action=services.webhook_redeploy`,
      headers: { authorization: admin.auth },
    });
    expect(json<{ data: unknown[] }>(audited).data).toEqual([
      expect.objectContaining({
        actor: { type: 'webhook', user_id: null, api_key_id: null, webhook_id: hook.id },
        route: '/hooks/push/:hook_id',
        target: { type: 'service', id: serviceId },
        customer_id: customerId,
        status_code: 202,
      }),
    ]);
  });

  it('a signature made with another secret is a 401 problem, recorded as rejected', async () => {
    const body = pushBody('main', sha());
    const response = await deliver(hook.id, body, sign('whs_not-the-secret', body, randomUUID()));
    expect(response.statusCode).toBe(401);
    expect(response.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(json(response).detail).toMatch(/X-(Hub|Gitlab|Gitea|Forgejo)/);
    expect((await deliveries(serviceId)).data[0]).toMatchObject({ outcome: 'rejected', status_code: 401 });
  });

  it('a missing signature is a 401 naming the header', async () => {
    const body = pushBody('main', sha());
    const headers = sign(hook.secret, body, randomUUID());
    const unsigned = Object.fromEntries(
      Object.entries(headers).filter(([name]) => !/signature|token/.test(name)),
    );
    const response = await deliver(hook.id, body, unsigned);
    expect(response.statusCode).toBe(401);
    expect(json(response).detail).toMatch(/missing/);
  });

  it('a redelivery of the same delivery id deploys once', async () => {
    const body = pushBody('main', sha());
    const headers = sign(hook.secret, body, randomUUID());
    const first = json<{ deployment_id: string }>(await deliver(hook.id, body, headers));
    const again = await deliver(hook.id, body, headers);
    expect(again.statusCode).toBe(202);
    expect(json(again)).toMatchObject({ outcome: 'ignored', deployment_id: first.deployment_id });
    const pinned = await h.container.db.deployment.count({
      where: { serviceId, requestedCommit: JSON.parse(body).after as string },
    });
    expect(pinned).toBe(1);
  });
});

describe.each(['github', 'gitea', 'forgejo'])('%s signs the body', (provider) => {
  it('a body changed after signing is a 401', async () => {
    const sign = PROVIDERS[provider]!;
    const hook = await createHook(await gitService());
    const body = pushBody('main', sha());
    const response = await deliver(hook.id, pushBody('main', sha()), sign(hook.secret, body, randomUUID()));
    expect(response.statusCode).toBe(401);
    expect(json(response).detail).toMatch(/does not match the body/);
  });
});

describe('what a signed delivery asks for', () => {
  let serviceId: string;
  let hook: { id: string; secret: string };
  const github = PROVIDERS.github!;
  beforeAll(async () => {
    serviceId = await gitService('release');
    hook = await createHook(serviceId);
  });

  it('a push to another branch is accepted and ignored, naming the branch', async () => {
    const body = pushBody('feature/x', sha());
    const response = await deliver(hook.id, body, github(hook.secret, body, randomUUID()));
    expect(response.statusCode).toBe(202);
    expect(json(response)).toEqual({
      outcome: 'ignored',
      message: 'ignored: branch feature/x is not tracked',
    });
    expect((await deliveries(serviceId)).data[0]).toMatchObject({
      outcome: 'ignored',
      branch: 'feature/x',
      provider: 'github',
      reason: 'branch feature/x is not tracked',
    });
  });

  it('a ping is ignored with its reason; a tag push too', async () => {
    const ping = JSON.stringify({ zen: 'hi', hook_id: 1 });
    const headers = { ...github(hook.secret, ping, randomUUID()), 'x-github-event': 'ping' };
    expect(json(await deliver(hook.id, ping, headers))).toMatchObject({ message: 'ignored: ping event' });
    const tag = JSON.stringify({ ref: 'refs/tags/v1', after: sha() });
    const tagged = await deliver(hook.id, tag, github(hook.secret, tag, randomUUID()));
    expect(json(tagged)).toMatchObject({
      outcome: 'ignored',
      message: 'ignored: refs/tags/v1 is not a branch',
    });
  });

  it('a newer push replaces the older queued one: each deployment runs its own commit or none', async () => {
    const [older, newer] = [sha(), sha()];
    const a = pushBody('release', older);
    const b = pushBody('release', newer);
    const first = json<{ deployment_id: string }>(
      await deliver(hook.id, a, github(hook.secret, a, randomUUID())),
    );
    const second = json<{ deployment_id: string }>(
      await deliver(hook.id, b, github(hook.secret, b, randomUUID())),
    );
    expect(second.deployment_id).not.toBe(first.deployment_id);
    const rows = await h.container.db.deployment.findMany({
      where: { id: { in: [first.deployment_id, second.deployment_id] } },
    });
    const byId = new Map(rows.map((row) => [row.id, row]));
    expect(byId.get(first.deployment_id)).toMatchObject({ status: 'superseded', requestedCommit: older });
    expect(byId.get(second.deployment_id)).toMatchObject({ status: 'queued', requestedCommit: newer });
  });

  it('an unknown hook is a 404, whatever the signature', async () => {
    const body = pushBody('release', sha());
    const response = await deliver(randomUUID(), body, github(hook.secret, body, randomUUID()));
    expect(response.statusCode).toBe(404);
  });

  it('rotation retires the old URL and secret', async () => {
    const old = hook;
    hook = await createHook(serviceId);
    expect(hook.id).not.toBe(old.id);
    expect(hook.secret).not.toBe(old.secret);
    const body = pushBody('release', sha());
    expect((await deliver(old.id, body, github(old.secret, body, randomUUID()))).statusCode).toBe(404);
    expect((await deliver(hook.id, body, github(old.secret, body, randomUUID()))).statusCode).toBe(401);
  });

  it('a service tracking the default branch follows the payload’s default branch', async () => {
    const tracking = await gitService(null);
    const own = await createHook(tracking);
    const body = pushBody('main', sha());
    const response = await deliver(own.id, body, github(own.secret, body, randomUUID()));
    expect(json(response)).toMatchObject({ outcome: 'deployed' });
  });
});

describe('managing the hook', () => {
  it('GET shows metadata without the URL or secret; DELETE removes it', async () => {
    const serviceId = await gitService();
    const hook = await createHook(serviceId);
    const get = () =>
      h.app.inject({
        method: 'GET',
        url: `/api/services/${serviceId}/webhook`,
        headers: { authorization: admin.auth },
      });
    const shown = await get();
    expect(json(shown)).toMatchObject({ exists: true, last_delivery: null });
    expect(shown.body).not.toContain(hook.id);
    expect(shown.body).not.toContain(hook.secret);
    const removed = await h.app.inject({
      method: 'DELETE',
      url: `/api/services/${serviceId}/webhook`,
      headers: { authorization: admin.auth },
    });
    expect(removed.statusCode).toBe(204);
    expect(json(await get())).toMatchObject({ exists: false, created_at: null });
    const body = pushBody('main', sha());
    expect((await deliver(hook.id, body, PROVIDERS.github!(hook.secret, body, 'x'))).statusCode).toBe(404);
  });

  it('a service that does not deploy from git gets no hook (409 naming why)', async () => {
    const compose = (await h.createService(admin.auth, { customer_id: customerId })).id;
    const response = await h.app.inject({
      method: 'POST',
      url: `/api/services/${compose}/webhook`,
      headers: { authorization: admin.auth },
    });
    expect(response.statusCode).toBe(409);
    expect(json(response).detail).toMatch(/not a git repository/);
  });

  it("another customer's operator gets 404 on every management route", async () => {
    const serviceId = await gitService();
    const other = await h.user('operator', (await h.customer()).id);
    for (const [method, url] of [
      ['POST', `/api/services/${serviceId}/webhook`],
      ['GET', `/api/services/${serviceId}/webhook`],
      ['DELETE', `/api/services/${serviceId}/webhook`],
      ['GET', `/api/services/${serviceId}/webhook-deliveries`],
    ] as const) {
      const response = await h.app.inject({ method, url, headers: { authorization: other.auth } });
      expect({ method, url, status: response.statusCode }).toEqual({ method, url, status: 404 });
    }
  });

  it('deliveries are paginated newest first', async () => {
    const serviceId = await gitService();
    const hook = await createHook(serviceId);
    for (const branch of ['a', 'b', 'c']) {
      const body = pushBody(branch, sha());
      await deliver(hook.id, body, PROVIDERS.github!(hook.secret, body, randomUUID()));
    }
    const response = await h.app.inject({
      method: 'GET',
      url: `/api/services/${serviceId}/webhook-deliveries?per_page=2&page=1`,
      headers: { authorization: admin.auth },
    });
    const page = json<{ data: { branch: string }[]; total: number; per_page: number }>(response);
    expect(page.total).toBe(3);
    expect(page.data.map((row) => row.branch)).toEqual(['c', 'b']);
  });
});
