import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, json, uniqueName, type Harness } from '../../test-support/harness.js';

/**
 * Passwords the template catalog generates are secret variables (docs/secrets.md#secret-variables):
 * the create's answer, the detail, the list and a PATCH's answer name them and never carry the
 * value; the audited reveal reads it. A password the caller types is a secret too, whichever map
 * the client sent it under (the dashboard's create form sends `variables`).
 */
let h: Harness;
let admin: { auth: string };
let customerId: string;

beforeAll(async () => {
  h = await createHarness();
  admin = await h.user('admin');
  customerId = (await h.customer()).id;
});
afterAll(async () => h?.close());

const request = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) =>
  h.app.inject({ method, url, headers: { authorization: admin.auth }, ...(payload ? { payload } : {}) });

async function createPostgres(extra: object = {}) {
  const name = uniqueName('pg');
  const created = await request('POST', '/api/services', {
    name,
    customer_id: customerId,
    deploy_method: 'template',
    template_id: 'postgres',
    ...extra,
  });
  expect(created.statusCode).toBe(201);
  const { id } = json<{ id: string }>(created);
  const stored = await h.container.db.service.findUniqueOrThrow({ where: { id } });
  return { id, name, created, stored: stored.variables as Record<string, string> };
}

const revealed = async (id: string, name: string) =>
  json<{ value: string }>(await request('POST', `/api/services/${id}/secret-variables/reveal`, { name }))
    .value;

describe('a generated template password', () => {
  it('is a secret: named by create, detail, list and PATCH answers, its value in none; reveal reads it', async () => {
    const { id, name, created, stored } = await createPostgres();
    const password = stored.POSTGRES_PASSWORD ?? '';
    expect(password).toMatch(/^[A-Za-z0-9]{32}$/);

    const detail = await request('GET', `/api/services/${id}`);
    const body = json<{ variables: Record<string, string>; secret_variables: Record<string, object> }>(
      detail,
    );
    expect(body.variables).toEqual({ POSTGRES_USER: 'app', POSTGRES_DB: 'app' });
    expect(body.secret_variables.POSTGRES_PASSWORD).toMatchObject({ set: true });
    const list = await request('GET', `/api/services?search=${name}`);
    const patched = await request('PATCH', `/api/services/${id}`, { variables: { POSTGRES_DB: 'shop' } });
    expect(patched.statusCode).toBe(200);
    for (const answer of [created, detail, list, patched]) expect(answer.body).not.toContain(password);

    expect(await revealed(id, 'POSTGRES_PASSWORD')).toBe(password);
    // A secret stays one: a plain write of the name is refused, as for any secret.
    const plainWrite = await request('PATCH', `/api/services/${id}`, {
      variables: { POSTGRES_PASSWORD: 'x'.repeat(16) },
    });
    expect(plainWrite.statusCode).toBe(422);
  });

  it('generated again when removed is a secret again, with a new value', async () => {
    const { id, stored } = await createPostgres();
    const removed = await request('PATCH', `/api/services/${id}`, {
      secret_variables: { POSTGRES_PASSWORD: null },
    });
    expect(removed.statusCode).toBe(200);
    expect(json<{ secret_variables: object }>(removed).secret_variables).toHaveProperty('POSTGRES_PASSWORD');
    const again = await revealed(id, 'POSTGRES_PASSWORD');
    expect(again).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(again).not.toBe(stored.POSTGRES_PASSWORD);
    expect(removed.body).not.toContain(again);
  });

  it('typed by the caller is a secret whichever map it was sent under; other variables stay plain', async () => {
    // What the dashboard's create form sends when the user types a password into the field.
    const typed = await createPostgres({
      variables: { POSTGRES_PASSWORD: 'caller-chose-this-1', POSTGRES_DB: 'shop' },
    });
    expect(typed.stored.POSTGRES_PASSWORD).toBe('caller-chose-this-1');
    const detail = await request('GET', `/api/services/${typed.id}`);
    const body = json<{ variables: object; secret_variables: Record<string, object> }>(detail);
    expect(body.variables).toEqual({ POSTGRES_USER: 'app', POSTGRES_DB: 'shop' });
    expect(body.secret_variables.POSTGRES_PASSWORD).toMatchObject({ set: true });
    for (const answer of [typed.created, detail]) expect(answer.body).not.toContain('caller-chose-this-1');
    expect(await revealed(typed.id, 'POSTGRES_PASSWORD')).toBe('caller-chose-this-1');

    const secret = await createPostgres({ secret_variables: { POSTGRES_PASSWORD: 'caller-secret-value-2' } });
    expect(await revealed(secret.id, 'POSTGRES_PASSWORD')).toBe('caller-secret-value-2');
  });

  it('typed as plain for a template with two passwords: both secret, the refusal of a bad one names no value', async () => {
    const name = uniqueName('maria');
    const created = await request('POST', '/api/services', {
      name,
      customer_id: customerId,
      deploy_method: 'template',
      template_id: 'mariadb',
      variables: { MARIADB_PASSWORD: 'typed-app-password-3' },
    });
    expect(created.statusCode).toBe(201);
    const { id } = json<{ id: string }>(created);
    const body = json<{ variables: object; secret_variables: object }>(
      await request('GET', `/api/services/${id}`),
    );
    expect(Object.keys(body.secret_variables).sort()).toEqual(['MARIADB_PASSWORD', 'MARIADB_ROOT_PASSWORD']);
    expect(body.variables).not.toHaveProperty('MARIADB_PASSWORD');
    expect(await revealed(id, 'MARIADB_PASSWORD')).toBe('typed-app-password-3');

    // A redis password is checked by the template's pattern; the 400 names the field, not the value.
    const refused = await request('POST', '/api/services', {
      name: uniqueName('redis'),
      customer_id: customerId,
      deploy_method: 'template',
      template_id: 'redis',
      variables: { REDIS_PASSWORD: 'short-#-pw' },
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('REDIS_PASSWORD');
    expect(refused.body).not.toContain('short-#-pw');
  });

  it('a password stored plain by an older create becomes secret at the next PATCH, its value unchanged', async () => {
    const { id, stored } = await createPostgres({
      secret_variables: { POSTGRES_PASSWORD: 'older-plain-pw-4' },
    });
    // As a service created before template passwords were secret: the value, but no mark.
    await h.container.db.service.update({ where: { id }, data: { secretNames: {} } });
    const before = json<{ variables: object }>(await request('GET', `/api/services/${id}`));
    expect(before.variables).toHaveProperty('POSTGRES_PASSWORD', 'older-plain-pw-4');

    const patched = await request('PATCH', `/api/services/${id}`, { variables: { POSTGRES_DB: 'shop' } });
    expect(patched.statusCode).toBe(200);
    expect(patched.body).not.toContain('older-plain-pw-4');
    expect(json<{ secret_variables: object }>(patched).secret_variables).toHaveProperty('POSTGRES_PASSWORD');
    expect(await revealed(id, 'POSTGRES_PASSWORD')).toBe(stored.POSTGRES_PASSWORD);
  });
});
