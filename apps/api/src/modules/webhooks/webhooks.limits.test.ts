import { createHmac, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, json, type Harness } from '../../test-support/harness.js';
import {
  SIGNERS,
  deliver,
  deliverUnsigned,
  gitServiceWithHook,
  pushBody,
  randomSha,
} from '../../test-support/push-deliveries.js';

// The public receiver's bounds (docs/webhooks.md): a flood of deliveries to one hook is refused
// before any database work, and a body over 1 MiB is refused before it is read whole.
let h: Harness;
let hookId: string;
let secret: string;
let admin: { auth: string };

beforeAll(async () => {
  h = await createHarness({ GIT_ALLOWED_HOSTS: '127.0.0.1:40000', WEBHOOK_RATE_LIMIT_PER_MINUTE: '3' });
  admin = await h.user('admin');
  const service = await h.createService(admin.auth, {
    customer_id: (await h.customer()).id,
    deploy_method: 'git',
    git_url: 'git://127.0.0.1:40000/repo.git',
    git_branch: 'main',
  });
  const created = await h.app.inject({
    method: 'POST',
    url: `/api/services/${service.id}/webhook`,
    headers: { authorization: admin.auth },
  });
  const hook = json<{ url: string; secret: string }>(created);
  hookId = new URL(hook.url).pathname.split('/').pop()!;
  secret = hook.secret;
});
afterAll(async () => h.close());

function ping(id: string, payload = JSON.stringify({ zen: 'hi' })) {
  return h.app.inject({
    method: 'POST',
    url: `/hooks/push/${id}`,
    headers: {
      'content-type': 'application/json',
      'x-github-event': 'ping',
      'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(payload).digest('hex')}`,
    },
    payload,
  });
}

/** The limiter's windows are wall-clock minutes: start a counted sequence well inside one. */
async function insideOneWindow(): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 10_000) await new Promise((resolve) => setTimeout(resolve, left + 100));
}

describe('receiver bounds', () => {
  it('answers 429 with Retry-After once a hook is over its deliveries per minute', async () => {
    await insideOneWindow();
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await ping(hookId)).statusCode);
    expect(statuses).toEqual([202, 202, 202, 429, 429]);
    const refused = await ping(hookId);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(json(refused).code).toBe('rate_limited');
  });

  it('counts unknown hook ids too, so guessing ids is bounded', async () => {
    const guess = randomUUID();
    await insideOneWindow();
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await ping(guess)).statusCode);
    expect(statuses).toEqual([404, 404, 404, 429]);
  });

  it('refuses a body over 1 MiB with 413', async () => {
    const big = JSON.stringify({ ref: 'refs/heads/main', padding: 'x'.repeat(1024 * 1024) });
    const response = await ping(randomUUID(), big);
    expect(response.statusCode).toBe(413);
    expect(response.headers['content-type']).toMatch(/application\/problem\+json/);
  });

  // Last: its flood also fills the source address's unsigned budget for the rest of the minute.
  it('unsigned posts spend a budget of their own: after 65 of them a signed push is still accepted', async () => {
    const hook = await gitServiceWithHook(h, admin.auth, (await h.customer()).id);
    await insideOneWindow();
    const statuses: number[] = [];
    for (let i = 0; i < 65; i++)
      statuses.push((await deliverUnsigned(h, hook.id, pushBody('main', randomSha()))).statusCode);
    expect(statuses).toEqual([...Array<number>(3).fill(401), ...Array<number>(62).fill(429)]);
    const commit = randomSha();
    const body = pushBody('main', commit);
    const signed = await deliver(h, hook.id, body, SIGNERS.github(hook.secret, body, randomUUID()));
    expect(signed.statusCode).toBe(202);
    expect(json(signed)).toMatchObject({ outcome: 'deployed', commit });
  });
});
