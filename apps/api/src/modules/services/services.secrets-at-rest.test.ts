import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { createRedis } from '@hostctl/queue';
import { redisDump } from '@hostctl/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, json, type Harness } from '../../test-support/harness.js';

/**
 * Variables through the API (docs/secrets.md): the contract is unchanged (the detail shows the
 * values as written), while every copy the API leaves behind (the services row, the audit log,
 * the idempotency record of the create, the job payload) holds none of them in plaintext.
 */
const run = promisify(execFile);
let h: Harness;
let admin: string;
let redis: ReturnType<typeof createRedis>;

beforeAll(async () => {
  h = await createHarness();
  admin = (await h.user('admin')).auth;
  redis = createRedis(h.config.REDIS_URL, 'request');
});
afterAll(async () => {
  await redis?.quit();
  await h?.close();
});

const redisText = (prefix: string) => redisDump(redis, prefix);

describe('variables written through the API', () => {
  it('read back exactly as written, yet appear in no pg_dump or Redis key', async () => {
    const created = `planted-create-${randomUUID()}`;
    const patched = `planted-patch-${randomUUID()}`;
    const customer = await h.customer();
    const response = await h.app.inject({
      method: 'POST',
      url: '/api/services',
      headers: { authorization: admin, 'idempotency-key': randomUUID() },
      payload: {
        name: `sec-${randomUUID().slice(0, 8)}`,
        customer_id: customer.id,
        deploy_method: 'compose',
        compose: 'services:\n  web:\n    image: local/busybox:1\n    environment:\n      TOKEN: ${TOKEN}\n',
        variables: { TOKEN: created, PLAIN: 'visible' },
      },
    });
    expect(response.statusCode).toBe(201);
    const { id } = json<{ id: string }>(response);
    const patch = await h.app.inject({
      method: 'PATCH',
      url: `/api/services/${id}`,
      headers: { authorization: admin },
      payload: { variables: { TOKEN: patched } },
    });
    expect(patch.statusCode).toBe(200);
    const detail = json<{ variables: Record<string, string> }>(
      await h.app.inject({ method: 'GET', url: `/api/services/${id}`, headers: { authorization: admin } }),
    );
    expect(detail.variables).toEqual({ TOKEN: patched, PLAIN: 'visible' });

    const { stdout: dump } = await run('pg_dump', ['--data-only', h.config.DATABASE_URL], {
      maxBuffer: 256 * 1024 * 1024,
    });
    expect(dump).toContain(id);
    const queued = await redisText(h.config.QUEUE_PREFIX);
    expect(queued).toContain(id);
    for (const value of [created, patched]) {
      expect(dump).not.toContain(value);
      expect(queued).not.toContain(value);
    }
  });

  it('secret variables too: created, replaced and revealed, yet in no pg_dump, Redis key or audit row', async () => {
    const created = `planted-secret-create-${randomUUID()}`;
    const replaced = `planted-secret-patch-${randomUUID()}`;
    const customer = await h.customer();
    const response = await h.app.inject({
      method: 'POST',
      url: '/api/services',
      headers: { authorization: admin, 'idempotency-key': randomUUID() },
      payload: {
        name: `sec-${randomUUID().slice(0, 8)}`,
        customer_id: customer.id,
        deploy_method: 'compose',
        compose: 'services:\n  web:\n    image: local/busybox:1\n    environment:\n      TOKEN: ${TOKEN}\n',
        secret_variables: { TOKEN: created },
      },
    });
    expect(response.statusCode).toBe(201);
    const { id } = json<{ id: string }>(response);
    const patch = await h.app.inject({
      method: 'PATCH',
      url: `/api/services/${id}`,
      headers: { authorization: admin },
      payload: { secret_variables: { TOKEN: replaced } },
    });
    expect(patch.statusCode).toBe(200);
    // A client that sends an Idempotency-Key with a reveal gets the value, and nothing keeps it.
    const revealed = await h.app.inject({
      method: 'POST',
      url: `/api/services/${id}/secret-variables/reveal`,
      headers: { authorization: admin, 'idempotency-key': randomUUID() },
      payload: { name: 'TOKEN' },
    });
    expect(json<{ value: string }>(revealed).value).toBe(replaced);
    await h.container.audit.flush();

    const { stdout: dump } = await run('pg_dump', ['--data-only', h.config.DATABASE_URL], {
      maxBuffer: 256 * 1024 * 1024,
    });
    expect(dump).toContain(id);
    const queued = await redisText(h.config.QUEUE_PREFIX);
    for (const value of [created, replaced]) {
      expect(dump).not.toContain(value);
      expect(queued).not.toContain(value);
    }
  });

  it('variable groups too: created, changed, revealed and redeployed, yet in no pg_dump, Redis key or audit row', async () => {
    const plain = `planted-group-plain-${randomUUID()}`;
    const created = `planted-group-secret-${randomUUID()}`;
    const replaced = `planted-group-patch-${randomUUID()}`;
    const customer = await h.customer();
    const call = (method: 'POST' | 'PATCH', url: string, payload?: object) =>
      h.app.inject({
        method,
        url,
        headers: { authorization: admin, 'idempotency-key': randomUUID() },
        ...(payload ? { payload } : {}),
      });
    const group = await call('POST', '/api/variable-groups', {
      name: `grp-${randomUUID().slice(0, 8)}`,
      customer_id: customer.id,
      variables: { SHARED: plain },
      secret_variables: { TOKEN: created },
    });
    expect(group.statusCode).toBe(201);
    const { id } = json<{ id: string }>(group);
    const service = await call('POST', '/api/services', {
      name: `sec-${randomUUID().slice(0, 8)}`,
      customer_id: customer.id,
      deploy_method: 'compose',
      compose: 'services:\n  web:\n    image: local/busybox:1\n    environment:\n      TOKEN: ${TOKEN}\n',
      variable_groups: [id],
    });
    expect(service.statusCode).toBe(201);
    expect(
      (await call('PATCH', `/api/variable-groups/${id}`, { secret_variables: { TOKEN: replaced } }))
        .statusCode,
    ).toBe(200);
    const revealed = await call('POST', `/api/variable-groups/${id}/secret-variables/reveal`, {
      name: 'TOKEN',
    });
    expect(json<{ value: string }>(revealed).value).toBe(replaced);
    expect((await call('POST', `/api/variable-groups/${id}/redeploy`)).statusCode).toBe(200);
    await h.container.audit.flush();

    const { stdout: dump } = await run('pg_dump', ['--data-only', h.config.DATABASE_URL], {
      maxBuffer: 256 * 1024 * 1024,
    });
    expect(dump).toContain(id);
    const queued = await redisText(h.config.QUEUE_PREFIX);
    expect(queued).toContain(id);
    for (const value of [plain, created, replaced]) {
      expect(dump).not.toContain(value);
      expect(queued).not.toContain(value);
    }
  });
});
