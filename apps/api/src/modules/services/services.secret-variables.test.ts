import { randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { generateApiKey, type KeyAction } from '@hostctl/auth-policy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, json, type Harness } from '../../test-support/harness.js';

/**
 * Secret variables through the API (docs/secrets.md#secret-variables): written like variables,
 * never read back by the detail, the list or a PATCH answer; revealed one at a time by callers
 * that may change the service, with an audit entry that names the secret and never holds it.
 */
let h: Harness;
let admin: { id: string; auth: string };
let customerA: string;

beforeAll(async () => {
  h = await createHarness();
  admin = await h.user('admin');
  customerA = (await h.customer()).id;
});
afterAll(async () => h?.close());

const planted = (label: string) => `planted-${label}-${randomUUID()}`;

async function createWithSecret(secret: string, extra: Record<string, unknown> = {}) {
  return h.createService(admin.auth, {
    customer_id: customerA,
    variables: { PLAIN: 'visible' },
    secret_variables: { DB_PASSWORD: secret },
    ...extra,
  }) as Promise<{ id: string }>;
}

const detailOf = async (id: string, auth = admin.auth) =>
  h.app.inject({ method: 'GET', url: `/api/services/${id}`, headers: { authorization: auth } });
const patch = (id: string, payload: object, auth = admin.auth) =>
  h.app.inject({ method: 'PATCH', url: `/api/services/${id}`, headers: { authorization: auth }, payload });
const reveal = (id: string, name: string, auth = admin.auth) =>
  h.app.inject({
    method: 'POST',
    url: `/api/services/${id}/secret-variables/reveal`,
    headers: { authorization: auth },
    payload: { name },
  });

async function limitedKey(ownerId: string, serviceId: string, actions: KeyAction[]): Promise<string> {
  const { key, digest } = generateApiKey();
  await h.container.db.apiKey.create({
    data: { userId: ownerId, name: 'limited', digest, serviceId, customerId: customerA, actions },
  });
  return `Bearer ${key}`;
}

async function auditOf(response: LightMyRequestResponse) {
  await h.container.audit.flush();
  return h.container.db.auditEvent.findFirstOrThrow({
    where: { requestId: String(response.headers['x-request-id']) },
  });
}

describe('secret variables are write-only', () => {
  it('the detail and the list show the name and when it was set, never the value', async () => {
    const secret = planted('create');
    const { id } = await createWithSecret(secret);
    const detail = await detailOf(id);
    expect(detail.statusCode).toBe(200);
    const body = json<{
      variables: object;
      secret_variables: Record<string, { set: boolean; updated_at: string }>;
    }>(detail);
    expect(body.variables).toEqual({ PLAIN: 'visible' });
    expect(Object.keys(body.secret_variables)).toEqual(['DB_PASSWORD']);
    expect(body.secret_variables.DB_PASSWORD?.set).toBe(true);
    expect(Date.parse(body.secret_variables.DB_PASSWORD!.updated_at)).not.toBeNaN();
    expect(detail.body).not.toContain(secret);
    const list = await h.app.inject({
      method: 'GET',
      url: `/api/services?customer_id=${customerA}&per_page=100`,
      headers: { authorization: admin.auth },
    });
    expect(list.body).toContain(id);
    expect(list.body).not.toContain(secret);
  });

  it('PATCH replaces and deletes a secret, and its answer holds no value', async () => {
    const { id } = await createWithSecret(planted('first'));
    const replaced = planted('replaced');
    const changed = await patch(id, {
      secret_variables: { DB_PASSWORD: replaced, API_TOKEN: planted('token') },
    });
    expect(changed.statusCode).toBe(200);
    expect(changed.body).not.toContain(replaced);
    expect(Object.keys(json<{ secret_variables: object }>(changed).secret_variables).sort()).toEqual([
      'API_TOKEN',
      'DB_PASSWORD',
    ]);
    expect(json<{ value: string }>(await reveal(id, 'DB_PASSWORD')).value).toBe(replaced);

    const deleted = await patch(id, { secret_variables: { API_TOKEN: null } });
    expect(deleted.statusCode).toBe(200);
    expect(Object.keys(json<{ secret_variables: object }>(deleted).secret_variables)).toEqual([
      'DB_PASSWORD',
    ]);
    expect((await reveal(id, 'API_TOKEN')).statusCode).toBe(404);
    // Deleting a secret that is not there deletes nothing, like variables.
    expect((await patch(id, { secret_variables: { NOT_THERE: null } })).statusCode).toBe(200);
  });

  it('a name is plain or secret: writing it as the other kind is a 422 naming the field', async () => {
    const clash = await h.app.inject({
      method: 'POST',
      url: '/api/services',
      headers: { authorization: admin.auth },
      payload: {
        name: `clash-${randomUUID().slice(0, 8)}`,
        customer_id: customerA,
        deploy_method: 'compose',
        compose: 'services:\n  web:\n    image: local/busybox:1\n',
        variables: { TWICE: 'a' },
        secret_variables: { TWICE: 'b' },
      },
    });
    expect(clash.statusCode).toBe(422);
    expect(json(clash).errors).toEqual([
      { path: '/body/secret_variables/TWICE', message: expect.any(String) },
    ]);

    const secret = planted('kind');
    const { id } = await createWithSecret(secret);
    const plainOverSecret = await patch(id, { variables: { DB_PASSWORD: 'overwrite' } });
    expect(plainOverSecret.statusCode).toBe(422);
    expect(json(plainOverSecret).errors).toEqual([
      { path: '/body/variables/DB_PASSWORD', message: expect.any(String) },
    ]);
    const plainDeleteOfSecret = await patch(id, { variables: { DB_PASSWORD: null } });
    expect(plainDeleteOfSecret.statusCode).toBe(422);
    const secretOverPlain = await patch(id, { secret_variables: { PLAIN: 'x' } });
    expect(secretOverPlain.statusCode).toBe(422);
    expect(json(secretOverPlain).errors).toEqual([
      { path: '/body/secret_variables/PLAIN', message: expect.any(String) },
    ]);
    // Nothing changed by the refusals.
    expect(json<{ value: string }>(await reveal(id, 'DB_PASSWORD')).value).toBe(secret);

    // Changing kind is explicit: remove it from one map and write it to the other in one request.
    const madeSecret = await patch(id, {
      variables: { PLAIN: null },
      secret_variables: { PLAIN: 'now-hidden' },
    });
    expect(madeSecret.statusCode).toBe(200);
    const after = json<{ variables: object; secret_variables: object }>(madeSecret);
    expect(after.variables).toEqual({});
    expect(Object.keys(after.secret_variables).sort()).toEqual(['DB_PASSWORD', 'PLAIN']);
    expect(madeSecret.body).not.toContain('now-hidden');
  });

  it('keeps the size bounds of variables, naming secret_variables', async () => {
    const { id } = await createWithSecret(planted('size'));
    const tooBig = await patch(id, { secret_variables: { HUGE: 'x'.repeat(70_000) } });
    expect(tooBig.statusCode).toBe(400);
    expect(tooBig.body).toContain('/body/secret_variables');
    const badName = await patch(id, { secret_variables: { 'bad name': 'x' } });
    expect(badName.statusCode).toBe(400);
  });

  it("a refused compose never quotes a secret's value", async () => {
    // A valid reference the image policy refuses: the refusal quotes the image it read.
    const secret = `127.0.0.1:2019/leak${randomUUID().replaceAll('-', '')}:1`;
    const response = await h.app.inject({
      method: 'POST',
      url: '/api/services',
      headers: { authorization: admin.auth },
      payload: {
        name: `leak-${randomUUID().slice(0, 8)}`,
        customer_id: customerA,
        deploy_method: 'compose',
        compose: 'services:\n  web:\n    image: ${IMAGE}\n',
        secret_variables: { IMAGE: secret },
      },
    });
    expect(response.statusCode).toBe(400);
    expect(response.body).toContain('***');
    expect(response.body).not.toContain(secret);
  });
});

describe('reveal', () => {
  it('gives a manager the value with no-store, and the audit names the secret without its value', async () => {
    const secret = planted('reveal');
    const { id } = await createWithSecret(secret);
    const response = await reveal(id, 'DB_PASSWORD');
    expect(response.statusCode).toBe(200);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(json(response)).toMatchObject({ name: 'DB_PASSWORD', value: secret });
    const row = await auditOf(response);
    expect(row).toMatchObject({
      action: 'services.secret_variables.reveal',
      targetType: 'service',
      targetId: id,
      subject: 'DB_PASSWORD',
      statusCode: 200,
    });
    expect(JSON.stringify(row)).not.toContain(secret);
    const listed = await h.app.inject({
      method: 'GET',
      url: `/api/audit-events?target_id=${id}`,
      headers: { authorization: admin.auth },
    });
    expect(listed.body).toContain('"subject":"DB_PASSWORD"');
    expect(listed.body).not.toContain(secret);
  });

  it('a plain variable or an unknown name is not revealed (404)', async () => {
    const { id } = await createWithSecret(planted('unknown'));
    expect((await reveal(id, 'PLAIN')).statusCode).toBe(404);
    expect((await reveal(id, 'NOPE')).statusCode).toBe(404);
  });

  it('a viewer is refused (403), another customer sees no service (404)', async () => {
    const secret = planted('scope');
    const { id } = await createWithSecret(secret);
    const viewer = await h.user('viewer', customerA);
    const refused = await reveal(id, 'DB_PASSWORD', viewer.auth);
    expect(refused.statusCode).toBe(403);
    const other = await h.user('admin', (await h.customer()).id);
    const hidden = await reveal(id, 'DB_PASSWORD', other.auth);
    expect(hidden.statusCode).toBe(404);
    for (const response of [refused, hidden]) expect(response.body).not.toContain(secret);
  });

  it('a deploy token of the service is refused unless it may manage', async () => {
    const secret = planted('token');
    const { id } = await createWithSecret(secret);
    const ci = await limitedKey(admin.id, id, ['read', 'deploy', 'operate']);
    const refused = await reveal(id, 'DB_PASSWORD', ci);
    expect(refused.statusCode).toBe(403);
    expect(json(refused).detail).toMatch(/manage/);
    expect(refused.body).not.toContain(secret);
    // It reads the service, but the secret stays hidden from it too.
    const read = await detailOf(id, ci);
    expect(read.statusCode).toBe(200);
    expect(read.body).not.toContain(secret);

    const manager = await limitedKey(admin.id, id, ['read', 'manage']);
    const revealed = await reveal(id, 'DB_PASSWORD', manager);
    expect(revealed.statusCode).toBe(200);
    expect(json<{ value: string }>(revealed).value).toBe(secret);
  });
});
